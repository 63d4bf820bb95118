/*
 * own_sigtrap.c - a program with its own SIGTRAP handler (tests/stress/run:
 * own_sigtrap), installed after wasp's, as a debugger-aware program or a
 * runtime would. Two threads each raise(SIGTRAP) 5 times and execute int3
 * 5 times between stretches of work; the handler counts every SIGTRAP it
 * gets. Exactly 20 are the program's: it prints the count and exits 42 when
 * it saw exactly those, 1 otherwise (issue 10: its handler ran 48 times
 * instead of 10 under wasp, and exit 42 became 1).
 */
#include <signal.h>
#include "stress.h"

#define PER_THREAD 5

static int traps;

static void on_trap(int sig, siginfo_t *si, void *uc)
{
    (void)sig; (void)si; (void)uc;
    __atomic_add_fetch(&traps, 1, __ATOMIC_RELAXED);
}

static void work(void)
{
    for (int i = 0; i < PER_THREAD; i++) {
        stress_burn(20.0);
        raise(SIGTRAP);
        stress_burn(20.0);
        __asm__ volatile("int3");
    }
}

static void *worker(void *arg)
{
    stress_note_thread();
    work();
    return arg;
}

int main(void)
{
    struct sigaction sa;
    pthread_t t;
    stress_note_thread();
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_trap;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGTRAP, &sa, NULL);
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 3;
    work();
    pthread_join(t, NULL);
    printf("own_sigtrap: %d SIGTRAPs seen, %d raised\n", traps, 4 * PER_THREAD);
    stress_facts();
    return traps == 4 * PER_THREAD ? 42 : 1;
}

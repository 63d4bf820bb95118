/*
 * own_sigsegv.c - a program that faults on purpose and recovers in its own
 * SIGSEGV handler, as a JVM's implicit null checks do (tests/stress/run:
 * own_sigsegv). Two threads each read an inaccessible page 50 times between
 * stretches of work; the handler checks the fault address and jumps back.
 * stdout: how many faults were recovered (100).
 */
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include "stress.h"

#define PER_THREAD 50

static volatile char *forbidden;
static __thread sigjmp_buf recover;
static int faults, wrong_address;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig; (void)uc;
    if (si->si_addr != (void *)forbidden)
        __atomic_add_fetch(&wrong_address, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&faults, 1, __ATOMIC_RELAXED);
    siglongjmp(recover, 1);
}

static void work(void)
{
    for (volatile int i = 0; i < PER_THREAD; i++) {
        stress_burn(4.0);
        if (sigsetjmp(recover, 1) == 0)
            (void)forbidden[0];
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
    forbidden = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (forbidden == MAP_FAILED)
        return 3;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGSEGV, &sa, NULL);
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 3;
    work();
    pthread_join(t, NULL);
    printf("own_sigsegv: %d faults recovered, %d at a wrong address\n", faults, wrong_address);
    stress_facts();
    return 0;
}

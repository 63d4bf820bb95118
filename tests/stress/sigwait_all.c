/*
 * sigwait_all.c - a program that blocks every signal and takes them with
 * sigwait (tests/stress/run: sigwait_all), as servers do. Two workers
 * compute; one of them also sends SIGUSR1 to the process 100 times, each
 * time waiting until main took it, then SIGTERM. Main, between sigwaits,
 * does a little work (so wasp samples it there too) and counts what it
 * got; any other signal is unexpected. It exits 0 when it saw exactly 100
 * SIGUSR1, one SIGTERM and nothing else.
 */
#include <signal.h>
#include "stress.h"

#define USR1S 100

static int taken;   /* SIGUSR1s main has taken */

static void *worker(void *sends)
{
    stress_note_thread();
    for (int i = 0; sends && i < USR1S; i++) {
        kill(getpid(), SIGUSR1);
        while (__atomic_load_n(&taken, __ATOMIC_ACQUIRE) <= i)
            stress_burn(0.2);
    }
    stress_burn(200.0);
    if (sends)
        kill(getpid(), SIGTERM);
    return NULL;
}

int main(void)
{
    sigset_t all;
    pthread_t t[2];
    int sig, terms = 0, unexpected = 0;
    stress_note_thread();
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, worker, i ? NULL : (void *)1) != 0)
            return 3;
    while (!terms && sigwait(&all, &sig) == 0) {
        if (sig == SIGUSR1)
            __atomic_add_fetch(&taken, 1, __ATOMIC_RELEASE);
        else if (sig == SIGTERM)
            terms++;
        else
            unexpected++, dprintf(2, "sigwait_all: unexpected signal %d\n", sig);
        stress_burn(1.0);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("sigwait_all: %d SIGUSR1, %d SIGTERM, %d unexpected\n", taken, terms, unexpected);
    stress_facts();
    return taken == USR1S && terms == 1 && !unexpected ? 0 : 1;
}

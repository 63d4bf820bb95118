/*
 * sigexit.c - a SIGALRM handler that calls _exit(7) at a random moment
 * while both threads are inside malloc-heavy code (tests/stress/run:
 * signal_exit, run 30 times). Issue 10's hang: wasp's _exit interposer
 * wrote the profiles from the handler — malloc, locks, stdio — and hung
 * when the interrupted thread held malloc's lock. Without wasp it always
 * ends with status 7 within the delay (10-300 ms).
 *
 * The threads' profiles may be given up (a handler cannot write them), but
 * none may be written twice: the suite checks "at most once".
 */
#include <sched.h>
#include <signal.h>
#include <sys/time.h>
#include "stress.h"

static void on_alarm(int sig)
{
    (void)sig;
    _exit(7);
}

static void *worker(void *arg)
{
    stress_note_thread();
    for (;;)
        stress_malloc_work(100000);
    return arg;
}

int main(void)
{
    struct timespec now;
    pthread_t t;
    clock_gettime(CLOCK_MONOTONIC, &now);
    srand((unsigned)(now.tv_nsec ^ getpid()));
    long delay_us = 10000 + rand() % 290000;
    struct itimerval it = { { 0, 0 }, { delay_us / 1000000, delay_us % 1000000 } };
    stress_note_thread();
    signal(SIGALRM, on_alarm);
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 3;
    while (__atomic_load_n(&stress_ntids, __ATOMIC_RELAXED) < 2)
        sched_yield();
    printf("sigexit: working until SIGALRM\n");
    fflush(stdout);
    stress_facts();   /* now: the handler ends the process, not main */
    setitimer(ITIMER_REAL, &it, NULL);
    for (;;)
        stress_malloc_work(100000);
}

/*
 * block_all.c - every signal blocked in every thread (tests/stress/run:
 * block_all): main blocks all before it starts two threads, which block
 * all again themselves. Issue 10: blocking SIGTRAP silently gave 0
 * samples. wasp must keep sampling, and the program must not notice.
 */
#include <signal.h>
#include "stress.h"

static void *worker(void *arg)
{
    sigset_t all;
    stress_note_thread();
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, NULL);
    stress_burn(300.0);
    return arg;
}

int main(void)
{
    sigset_t all, now;
    pthread_t t[2];
    stress_note_thread();
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, worker, NULL) != 0)
            return 3;
    stress_burn(300.0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("block_all: SIGTRAP %s blocked\n", sigismember(&now, SIGTRAP) ? "still" : "NOT");
    stress_facts();
    return 0;
}

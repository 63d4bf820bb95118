/*
 * stop_signal.c - a program that runs until it is stopped by a signal
 * (wasp e2e test: SIGTERM and SIGINT must not lose the profile).
 *
 * Plants: two threads run kernel() forever; the store at the line marked
 * "PLANT: stop-signal" writes 7 in even blocks of 64 elements and the round
 * number in odd ones, as silent_store.c: analytic program fraction 50%.
 * It never exits by itself; the suite stops it with SIGTERM (through
 * `wasp run`, which passes SIGTERM on) or SIGINT (sent to it directly, as a
 * terminal's ^C is).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define N 2048

__attribute__((noinline)) void kernel(long *a, long n, long r)
{
    for (long i = 0; i < n; i++)
        a[i] = (i & 64) ? r : 7; /* PLANT: stop-signal */
}

static void *spin(void *unused)
{
    long *a = calloc(N, sizeof(long));
    for (long r = 0; a; r++)
        kernel(a, N, r);
    return unused;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, spin, NULL) != 0)
        return 2;
    printf("stop_signal: running until stopped\n");
    fflush(stdout);
    spin(NULL);
    return 1;
}

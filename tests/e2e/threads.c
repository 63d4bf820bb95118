/*
 * threads.c - planted silent stores in 4 threads (wasp e2e test).
 *
 * Plants: 4 threads run worker() -> kernel() on arrays of their own; the one
 * store instruction of kernel(), at the line marked "PLANT: threads", writes
 * 7 (silent: same value as the round before) to elements of even blocks of
 * 64 and the round number (not silent) to elements of odd blocks, exactly as
 * silent_store.c does.
 *
 * Analytic program fraction: 50%, in every thread and so overall. All four
 * threads reach the store through the same calling context (kernel <- worker
 * <- libc thread start), so the report must show ONE pair <kernel, kernel>
 * at the PLANT line whose count is the sum over the threads (more than any
 * single thread could collect), not four pairs.
 *
 * Usage: threads [SCALE]   (SCALE multiplies the rounds of each thread)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define N 2048
#define THREADS 4

static long rounds;

__attribute__((noinline)) void kernel(long *a, long n, long r)
{
    for (long i = 0; i < n; i++)
        a[i] = (i & 64) ? r : 7; /* PLANT: threads */
}

static void *worker(void *arg)
{
    long *a = arg;
    for (long r = 0; r < rounds; r++)
        kernel(a, N, r);
    return NULL;
}

int main(int argc, char **argv)
{
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    pthread_t t[THREADS];
    long *a[THREADS];
    long sum = 0;
    rounds = (long)(700000 * scale);
    for (int k = 0; k < THREADS; k++) {
        a[k] = calloc(N, sizeof(long));
        if (!a[k] || pthread_create(&t[k], NULL, worker, a[k]) != 0)
            return 1;
    }
    for (int k = 0; k < THREADS; k++) {
        pthread_join(t[k], NULL);
        for (long i = 0; i < N; i++)
            sum += a[k][i];
        free(a[k]);
    }
    printf("threads: %d x %ld rounds, checksum %ld\n", THREADS, rounds, sum);
    return 0;
}

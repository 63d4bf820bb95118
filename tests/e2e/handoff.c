/*
 * handoff.c - two threads that hand work to each other (wasp e2e test).
 *
 * Usage: handoff ROUNDS
 * The main thread and a worker pass a byte back and forth through two
 * pipes ROUNDS times, each doing a little work per round, as a server's
 * threads hand requests along: every round switches each thread out at
 * least once. wasp's events cost every such switch (a timer reprogrammed,
 * debug registers swapped): pinned to one CPU, 50,000 rounds took 262 ms
 * alone and 516 ms under wasp, and the report said 0.63%. Each profile
 * now counts its thread's switches and charges them. Prints "handoff ROUNDS MS" (MS: the rounds'
 * wall time, for bench/switches.sh).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int to_worker[2], to_main[2];
static long rounds;
static volatile long sink;

static void work(long *a)
{
    for (int k = 0; k < 200; k++)
        a[k & 63] = k;
    sink += a[5];
}

static void *worker(void *arg)
{
    long a[64];
    char c;
    for (long i = 0; i < rounds; i++) {
        if (read(to_worker[0], &c, 1) != 1)
            break;
        work(a);
        if (write(to_main[1], &c, 1) != 1)
            break;
    }
    return arg;
}

int main(int argc, char **argv)
{
    long a[64];
    char c = 'x';
    pthread_t t;
    struct timespec t0, t1;
    rounds = argc > 1 ? atol(argv[1]) : 20000;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (pipe(to_worker) < 0 || pipe(to_main) < 0 || pthread_create(&t, NULL, worker, NULL) != 0)
        return 1;
    for (long i = 0; i < rounds; i++) {
        work(a);
        if (write(to_worker[1], &c, 1) != 1 || read(to_main[0], &c, 1) != 1)
            return 1;
    }
    pthread_join(t, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("handoff %ld %.1f\n", rounds, (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
    return 0;
}

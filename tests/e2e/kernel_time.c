/*
 * kernel_time.c - a thread that spends most of its CPU time in system
 * calls (wasp e2e test, case kernel_time).
 *
 * wasp's task clock samples user code only: a period that ends in the
 * kernel gives no sample. The report counted one requested interval per
 * sample as the thread's CPU time, and said "mean interval: 1.0 ms
 * (requested 1.0 ms)" for this one, sampled every 3.6-3.9 ms, and put
 * its overhead at 6.5% (1.1% by its task clock). The sampler's task clock is now read at
 * the end (budget.clock_ns).
 *
 * Usage: kernel_time [SECONDS]: 64 stores and a getppid system call, until
 * the thread used SECONDS of CPU time (default 1); prints "kernel_time NS",
 * its CPU time in ns.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile long sink[64];

static long long cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
    long long until = (long long)((argc > 1 ? atof(argv[1]) : 1) * 1e9);
    long long now;
    do {
        for (int k = 0; k < 16; k++) {
            for (long i = 0; i < 64; i++)
                sink[i] = i;
            syscall(SYS_getppid);
        }
    } while ((now = cpu_ns()) < until);
    printf("kernel_time %lld\n", now);
    return 0;
}

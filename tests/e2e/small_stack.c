/*
 * small_stack.c - threads that work with little stack left (wasp e2e test:
 * wasp's handler, which unwinds and decodes, must not run on the thread's
 * own stack, where it would overflow into the guard page).
 *
 * small_stack: 4 threads with 16 KiB stacks each recurse until less than
 * 3 KiB of their stack is left, then store into an array for ~0.3 s of
 * CPU. Without wasp this fits with room to spare; a handler frame of
 * 10-20 KB on that stack would not. Expected: exit 0, "small_stack: ok".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define THREADS 4
#define STACK (16 * 1024)   /* the least glibc allows */
#define LEFT 3072

static __thread uintptr_t stack_lo;
static volatile long sink[64];

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline)) static long descend(long depth)
{
    volatile char pad[512];
    pad[0] = (char)depth;
    if ((uintptr_t)pad - stack_lo > LEFT)
        return descend(depth + 1) + pad[0];
    double until = cpu_seconds() + 0.3;
    for (long r = 0; cpu_seconds() < until; r++)
        for (int i = 0; i < 64; i++)
            sink[i] = r;
    return depth;
}

static void *run(void *unused)
{
    pthread_attr_t a;
    void *lo;
    size_t size;
    pthread_getattr_np(pthread_self(), &a);
    pthread_attr_getstack(&a, &lo, &size);
    pthread_attr_destroy(&a);
    stack_lo = (uintptr_t)lo;
    cpu_seconds();   /* bind clock_gettime now: lazy binding needs kilobytes of stack */
    return (void *)descend(0);
}

int main(void)
{
    pthread_t t[THREADS];
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, STACK);
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], &a, run, NULL) != 0)
            return 2;
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    printf("small_stack: ok\n");
    return 0;
}

/*
 * smallstack.c - threads with small stacks working near the bottom of them
 * (tests/stress/run: small_stacks): 8 threads with 64 KiB stacks and 8
 * with the smallest stack glibc allows (16 KiB where it can), each
 * recursing until only MARGIN bytes are left above the lowest address of
 * its stack, then storing in a loop for ~100 ms of CPU time. A sample taken
 * there runs wasp's handler on what is left of the stack unless wasp gives
 * its handler a stack of its own; without wasp the program needs far less
 * than the margin. stdout is a checksum of the stores (not of the depth,
 * which depends on where the stack happens to start).
 */
#include <limits.h>
#include "stress.h"

#define LEAF_ROUNDS 8000000

typedef struct {
    size_t stack_size, margin;
    uint64_t sum;
    int ok;
} job;

static uint64_t stack_low(void)
{
    pthread_attr_t attr;
    void *addr = NULL;
    size_t size = 0;
    pthread_getattr_np(pthread_self(), &attr);
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
    return (uint64_t)(uintptr_t)addr;
}

/* Stores only, no calls: the leaf must not need stack of its own. */
__attribute__((noinline)) static uint64_t leaf(void)
{
    volatile uint64_t a[8];
    uint64_t sum = 0;
    for (long r = 0; r < LEAF_ROUNDS; r++)
        for (int i = 0; i < 8; i++) {
            a[i] = (uint64_t)(r & 3) + (uint64_t)i;
            sum += a[i];
        }
    return sum;
}

__attribute__((noinline)) static uint64_t descend(uint64_t low, size_t margin)
{
    volatile char frame[128];
    frame[0] = 1;
    if ((uint64_t)(uintptr_t)frame - low <= margin + 256)
        return leaf() + frame[0] - 1;
    return descend(low, margin) + frame[0] - 1;
}

static void *worker(void *arg)
{
    job *j = arg;
    stress_note_thread();
    j->sum = descend(stack_low(), j->margin);
    j->ok = 1;
    return NULL;
}

int main(void)
{
    enum { N = 16 };
    job jobs[N];
    pthread_t t[N];
    uint64_t sum = 0;
    size_t small = 16384 < PTHREAD_STACK_MIN ? PTHREAD_STACK_MIN : 16384;
    stress_note_thread();
    for (int i = 0; i < N; i++) {
        pthread_attr_t attr;
        jobs[i] = (job){ .stack_size = i < N / 2 ? 65536 : small, .margin = i < N / 2 ? 4096 : 2048 };
        pthread_attr_init(&attr);
        if (pthread_attr_setstacksize(&attr, jobs[i].stack_size) != 0 ||
            pthread_create(&t[i], &attr, worker, &jobs[i]) != 0) {
            printf("smallstack: cannot start a thread with a %zu-byte stack\n", jobs[i].stack_size);
            return 3;
        }
        pthread_attr_destroy(&attr);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        sum += jobs[i].ok ? jobs[i].sum : 0;
    }
    printf("smallstack: %d threads, checksum %llu\n", N, (unsigned long long)sum);
    dprintf(2, "smallstack: small stacks are %zu bytes\n", small);
    stress_facts();
    return 0;
}

/*
 * stack_array.c - planted silent stores to a stack array and to a heap array
 * (wasp e2e test of --stack).
 *
 * Plants: stack_kernel() stores to a local array of main (on the thread's
 * stack) at the line marked "PLANT: stack-store"; heap_kernel() stores to a
 * calloc'd array at "PLANT: heap-store". Both are written as
 * silent_store.c writes its array: 7 in even blocks of 64 elements, the
 * round number in odd ones, so each kernel's stores are half silent.
 *
 * Analytic program fraction: 50% with or without the stack array, whatever
 * share of the time each kernel takes (the two need not run at the same
 * speed: the CPU treats stack and heap lines differently). What --stack
 * changes is which pairs exist: with include (the native default) both;
 * with exclude only the heap pair, the stack samples counted as drop.stack.
 *
 * Usage: stack_array [SCALE]
 */
#include <stdio.h>
#include <stdlib.h>

#define N 2048

/* mask is a parameter so that both kernels compile to the same code. */
__attribute__((noinline)) void stack_kernel(long *a, long n, long r, long mask)
{
    for (long i = 0; i < n; i++)
        a[i] = (i & mask) ? r : 7; /* PLANT: stack-store */
}

__attribute__((noinline)) void heap_kernel(long *a, long n, long r, long mask)
{
    for (long i = 0; i < n; i++)
        a[i] = (i & mask) ? r : 7; /* PLANT: heap-store */
}

int main(int argc, char **argv)
{
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    long rounds = (long)(450000 * scale);
    long on_stack[N] = { 0 };
    long *on_heap = calloc(N, sizeof(long));
    if (!on_heap)
        return 1;
    for (long r = 0; r < rounds; r++) {
        stack_kernel(on_stack, N, r, 64);
        heap_kernel(on_heap, N, r, 64);
    }
    long sum = 0;
    for (long i = 0; i < N; i++)
        sum += on_stack[i] + on_heap[i];
    printf("stack_array: %ld rounds, checksum %ld\n", rounds, sum);
    free(on_heap);
    return 0;
}

/*
 * silent_store.c - planted silent stores (wasp e2e test).
 *
 * Plants: in kernel(), the one store instruction at the line marked
 * "PLANT: silent-store" writes a[i] every round. Elements in even blocks of
 * 64 (i & 64 == 0) always get 7 (the same value as the round before:
 * silent), elements in odd blocks get the round number (a new value every
 * round: not silent).
 *
 * Analytic program fraction: 50%. Each sampled store is followed, one round
 * later, by a store of the same instruction to the same address (C1 = C2 =
 * kernel at the PLANT line). Half of the elements, and so half of the
 * time-weighted samples of that single store instruction, are silent; each
 * store is 8 bytes. Nothing else in the hot loop stores to memory (index,
 * bound and round live in registers), so no other store instruction can
 * absorb samples. The value is picked by a cmov, so silent and non-silent
 * elements run the very same instructions; blocks of 64 rather than odd and
 * even elements, so that a period-2 pattern in where the CPU lets timer
 * interrupts in cannot favour one kind.
 *
 * Usage: silent_store [SCALE]   (SCALE multiplies the number of rounds; 1 ~ 1.5 s uninstrumented)
 */
#include <stdio.h>
#include <stdlib.h>

#define N 2048   /* 16 KiB: one round takes a few microseconds */

__attribute__((noinline)) void kernel(long *a, long n, long r)
{
    for (long i = 0; i < n; i++)
        a[i] = (i & 64) ? r : 7; /* PLANT: silent-store */
}

int main(int argc, char **argv)
{
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    long rounds = (long)(900000 * scale);
    long *a = calloc(N, sizeof(long));
    if (!a)
        return 1;
    for (long r = 0; r < rounds; r++)
        kernel(a, N, r);
    long sum = 0;
    for (long i = 0; i < N; i++)
        sum += a[i];
    printf("silent_store: %ld rounds, checksum %ld\n", rounds, sum);
    free(a);
    return 0;
}

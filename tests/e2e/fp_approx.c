/*
 * fp_approx.c - planted approximately-silent floating-point stores (wasp e2e).
 *
 * Plants: update() rewrites a double array every round with the one store
 * instruction (movsd) at the line marked "PLANT: fp-approx". Elements of odd
 * blocks of 64 get 1 + 1e-9 * round: a new value each round, but within a
 * relative 1e-9 of the old one (approximately silent under the default 1%
 * tolerance, never precisely silent). Elements of even blocks get +1e6 and
 * -1e6 in alternate rounds (a relative change of 2: neither silent nor
 * approximately silent).
 *
 * Analytic program fractions (silent-store mode): fraction 0% (no store
 * writes the value that was there), approx_fraction 50% (half the elements,
 * and so half of the time-weighted samples of the single store instruction,
 * are approximately silent). C1 = C2 = update at the PLANT line. The inner
 * loop is the same for both kinds of block (value in a register, store,
 * add, compare-and-branch), so neither kind is over-represented in the
 * time-weighted samples.
 *
 * Usage: fp_approx [SCALE]   (SCALE multiplies the number of rounds)
 */
#include <stdio.h>
#include <stdlib.h>

#define N 2048

#define BLOCK 64

__attribute__((noinline)) void update(double *a, long n, long r)
{
    double far = (r & 1) ? 1e6 : -1e6;     /* even blocks */
    double near = 1.0 + 1e-9 * (double)r;  /* odd blocks */
    /* Blocks of 64 elements rather than odd/even elements, so that the hot
     * inner loop is only the store, an add and a compare-and-branch, with the
     * value already in an SSE register (the store is an FP store, movsd):
     * nothing in it depends on which kind of block it writes. */
    for (long b = 0; b < n; b += BLOCK) {
        double d = (b / BLOCK) & 1 ? near : far;
        double *p = a + b;
        for (long j = 0; j < BLOCK; j++)
            p[j] = d; /* PLANT: fp-approx */
    }
}

int main(int argc, char **argv)
{
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    long rounds = (long)(1000000 * scale);
    double *a = calloc(N, sizeof(double));
    double sum = 0;
    if (!a)
        return 1;
    for (long r = 0; r < rounds; r++)
        update(a, N, r);
    for (long i = 0; i < N; i++)
        sum += a[i];
    /* No printf of a double: pairs inside libc's FP formatting, precisely
     * silent, would outrank the plant, whose waste is only approximate. */
    printf("fp_approx: %ld rounds, checksum %ld\n", rounds, (long)(sum * 1e6));
    free(a);
    return 0;
}

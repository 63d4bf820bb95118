/*
 * fp_vector.c - planted approximately-silent stores of double vectors
 * (wasp e2e test).
 *
 * Plants: update() rewrites an array of 2 x double vectors every round with
 * the one store instruction at the line marked "PLANT: fp-vector"; gcc
 * stores them with movaps, the same move it uses for integer vectors, so
 * only the mulpd that makes each value says it is floating point. Each
 * vector is one[j] * d with one[j] = 1.0: in odd blocks of 64 vectors d is
 * 1 + 1e-9 * round (a new value each round, within a relative 1e-9 of the
 * old one: approximately silent under the default 1% tolerance, never
 * precisely silent), in even blocks +1e6 and -1e6 in alternate rounds
 * (neither).
 *
 * Analytic program fractions (silent-store mode): fraction 0%, approx 50%.
 * C1 = C2 = update at the PLANT line. d is chosen outside the inner loop,
 * so both kinds of block run the very same instructions (load, mulpd,
 * store, add, compare-and-branch).
 *
 * Usage: fp_vector [SCALE]   (SCALE multiplies the number of rounds; 1 ~ 1.3 s uninstrumented)
 */
#include <stdio.h>
#include <stdlib.h>

typedef double v2df __attribute__((vector_size(16)));

#define N 256       /* vectors: 4 KiB, a round well under the sampling period even in TCG */
#define BLOCK 64

__attribute__((noinline)) void update(v2df *a, const v2df *one, long n, long r)
{
    double far = (r & 1) ? 1e6 : -1e6;
    double near = 1.0 + 1e-9 * (double)r;
    for (long b = 0; b < n; b += BLOCK) {
        double k = (b / BLOCK) & 1 ? near : far;
        v2df d = { k, k };
        for (long j = b; j < b + BLOCK; j++)
            a[j] = one[j] * d; /* PLANT: fp-vector */
    }
}

int main(int argc, char **argv)
{
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    long rounds = (long)(12000000 * scale);
    v2df *a = aligned_alloc(16, N * sizeof(v2df));
    v2df *one = aligned_alloc(16, N * sizeof(v2df));
    if (!a || !one)
        return 1;
    for (long i = 0; i < N; i++)
        one[i] = (v2df){ 1.0, 1.0 };
    for (long r = 0; r < rounds; r++)
        update(a, one, N, r);
    double sum = 0;
    for (long i = 0; i < N; i++)
        sum += a[i][0] + a[i][1];
    /* No printf of a double: libc's FP formatting would add pairs of its own. */
    printf("fp_vector: %ld rounds, checksum %ld\n", rounds, (long)sum);
    return 0;
}

/*
 * int_vector.c - planted silent stores of integer vectors (wasp e2e test).
 *
 * Plants: kernel() rewrites an array of 4 x int32 vectors every round with
 * the one store instruction at the line marked "PLANT: int-vector"; gcc
 * stores integer vectors with movaps (shorter than movdqa), whose element
 * type says "float". Each vector is base[i] + d, made by paddd right before
 * the store: d is 0 in even blocks of 64 vectors (the same value every
 * round: silent) and the round number in odd blocks (a new value every
 * round: not silent). base[i] is 2^24, so the changing values, read as
 * floats, differ by about 1e-7 relative from round to round: a detector
 * that took movaps to mean float would call them approximately silent.
 *
 * Analytic program fractions (silent-store mode): fraction 50%, approx 0%
 * (integers are compared exactly). C1 = C2 = kernel at the PLANT line. The
 * value d is chosen outside the inner loop, so both kinds of block run the
 * very same instructions (load, paddd, store, add, compare-and-branch).
 *
 * Usage: int_vector [SCALE]   (SCALE multiplies the number of rounds; 1 ~ 1.3 s uninstrumented)
 */
#include <stdio.h>
#include <stdlib.h>

typedef int v4si __attribute__((vector_size(16)));

#define N 256       /* vectors: 4 KiB, a round well under the sampling period even in TCG */
#define BLOCK 64

__attribute__((noinline)) void kernel(v4si *a, const v4si *base, long n, int r)
{
    for (long b = 0; b < n; b += BLOCK) {
        int k = (b / BLOCK) & 1 ? r : 0;
        v4si d = { k, k, k, k };
        for (long j = b; j < b + BLOCK; j++)
            a[j] = base[j] + d; /* PLANT: int-vector */
    }
}

int main(int argc, char **argv)
{
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    long rounds = (long)(12000000 * scale);
    v4si *a = aligned_alloc(16, N * sizeof(v4si));
    v4si *base = aligned_alloc(16, N * sizeof(v4si));
    if (!a || !base)
        return 1;
    for (long i = 0; i < N; i++)
        base[i] = (v4si){ 1 << 24, 1 << 24, 1 << 24, 1 << 24 };
    for (long r = 0; r < rounds; r++)
        kernel(a, base, N, (int)r);
    long sum = 0;
    for (long i = 0; i < N; i++)
        sum += a[i][0] + a[i][3];
    printf("int_vector: %ld rounds, checksum %ld\n", rounds, sum);
    return 0;
}

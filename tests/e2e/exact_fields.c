/*
 * exact_fields.c - two 4-byte fields of one 8-byte struct written by two
 * store instructions (wasp e2e test of the exact mode's shadow, whose
 * per-granule state must split when one granule holds two accesses).
 *
 * Plants: each round, kernel() writes every element's field a with 7 (the
 * value already there: silent) at "PLANT: field-a" and field b with the
 * round number (never silent) at "PLANT: field-b", then reads nothing.
 *
 * Analytic (exact mode, silent-store): program fraction 50%; the pair
 * <kernel:field-a, kernel:field-a> holds all of it (share 50%) and
 * <kernel:field-b, kernel:field-b> none. A shadow that kept one state per
 * 8 bytes without splitting would pair field a's store with field b's.
 *
 * Usage: exact_fields [SCALE]
 */
#include <stdio.h>
#include <stdlib.h>

#define N 2048

struct item {
    int a, b;
};

__attribute__((noinline)) void kernel(struct item *s, long n, int r)
{
    for (long i = 0; i < n; i++) {
        s[i].a = 7; /* PLANT: field-a */
        s[i].b = r; /* PLANT: field-b */
    }
}

int main(int argc, char **argv)
{
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    long rounds = (long)(900000 * scale);
    struct item *s = calloc(N, sizeof(*s));
    long sum = 0;
    if (!s)
        return 1;
    for (long r = 0; r < rounds; r++)
        kernel(s, N, (int)r);
    for (long i = 0; i < N; i++)
        sum += s[i].a + s[i].b;
    printf("exact_fields: %ld rounds, checksum %ld\n", rounds, sum);
    free(s);
    return 0;
}

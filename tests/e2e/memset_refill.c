/*
 * memset_refill.c - dead stores made by memset (wasp e2e test of string
 * instructions).
 *
 * Plants: every round clear() zeroes a 64 KiB array with memset, which
 * glibc does with "rep stosb" at this size; refill() then overwrites every
 * element (line "PLANT: refill") before sum() reads them. Every byte
 * memset stores is dead, killed by refill's store.
 *
 * Expected: a pair whose watch is the "rep stos" inside memset (in libc,
 * called from clear) and whose trap is refill's store, in the top 3 with a
 * non-zero fraction. The program fraction is the share of the sampled time
 * spent in memset, which depends on the CPU's fast-string speed: not
 * asserted.
 *
 * Usage: memset_refill [SCALE]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N (8192)   /* longs: 64 KiB */

__attribute__((noinline)) void clear(long *a)
{
    memset(a, 0, N * sizeof(long));
}

__attribute__((noinline)) void refill(long *a, long r)
{
    for (long i = 0; i < N; i++)
        a[i] = i ^ r; /* PLANT: refill */
}

__attribute__((noinline)) long sum(const long *a)
{
    long s = 0;
    for (long i = 0; i < N; i++)
        s += a[i];
    return s;
}

int main(int argc, char **argv)
{
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    long rounds = (long)(60000 * scale), total = 0;
    long *a = malloc(N * sizeof(long));
    if (!a)
        return 1;
    for (long r = 0; r < rounds; r++) {
        clear(a);
        refill(a, r);
        total += sum(a);
    }
    printf("memset_refill: %ld rounds, checksum %ld\n", rounds, total);
    free(a);
    return 0;
}

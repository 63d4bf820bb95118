/*
 * silent_load.c - planted silent loads (wasp e2e test).
 *
 * Plants: search() does a linear search for a key that is never present,
 * over the whole array, once per round, with the one load instruction at the
 * line marked "PLANT: silent-load". Between two searches, mutate() rewrites
 * the elements of the odd blocks of 64 (i & 64 != 0) with new values; the
 * elements of the even blocks never change.
 *
 * Analytic program fraction: 50%. A sampled load of a[i] in search() is next
 * loaded by the same instruction one round later (C1 = C2 = search at the
 * PLANT line); mutate()'s stores in between do not end a silent-load pair.
 * Elements of even blocks read the same value again (silent), those of odd
 * blocks a new value (not silent); with a single load instruction the
 * time-weighted samples are spread evenly over the elements, so half of the
 * loaded bytes are silent. mutate() has no loads, so it adds no samples in
 * silent-load mode. (Blocks rather than odd/even elements, so that a
 * period-2 pattern in where the CPU lets timer interrupts in cannot favour
 * one kind.)
 *
 * Usage: silent_load [SCALE]   (SCALE multiplies the number of rounds)
 */
#include <stdio.h>
#include <stdlib.h>

#define N 2048

__attribute__((noinline)) long search(const long *a, long n, long key)
{
    for (long i = 0; i < n; i++)
        if (a[i] == key) /* PLANT: silent-load */
            return i;
    return -1;
}

__attribute__((noinline)) void mutate(long *a, long n, long r)
{
    for (long b = 64; b < n; b += 128)
        for (long i = b; i < b + 64; i++)
            a[i] = r * n + i; /* odd blocks: a new value every round */
}

int main(int argc, char **argv)
{
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    long rounds = (long)(650000 * scale);
    long *a = calloc(N, sizeof(long));
    long found = 0;
    if (!a)
        return 1;
    for (long i = 0; i < N; i++)
        a[i] = i + 1; /* even blocks: fixed for the whole run */
    for (long r = 0; r < rounds; r++) {
        mutate(a, N, r);
        found += search(a, N, -1);
    }
    printf("silent_load: %ld rounds, checksum %ld\n", rounds, found);
    free(a);
    return 0;
}

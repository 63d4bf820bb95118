/*
 * diff_fix.c - a silent store and its fix, for `wasp diff` (wasp e2e test).
 *
 * Plants: update() writes a[i] every round at the line marked "PLANT:
 * diff-before": 7 to elements of even blocks of 64 (silent: the value
 * already there), the round number to odd blocks (not silent), as
 * silent_store.c does. Built with -DFIXED, the store is skipped when the
 * value is already there (the usual fix for a silent store), so the
 * store that remains, at "PLANT: diff-after", is never silent.
 *
 * Analytic: before, program fraction 50% with the pair <update, update> at
 * diff-before holding it; after, 0% and that pair gone. `wasp diff BEFORE
 * AFTER` must show the pair only in A with a change of -50 points.
 *
 * Usage: diff_fix [SCALE]
 */
#include <stdio.h>
#include <stdlib.h>

#define N 2048

__attribute__((noinline)) void update(long *a, long n, long r)
{
    for (long i = 0; i < n; i++) {
        long v = (i & 64) ? r : 7;
#ifdef FIXED
        if (a[i] != v)
            a[i] = v; /* PLANT: diff-after */
#else
        a[i] = v; /* PLANT: diff-before */
#endif
    }
}

int main(int argc, char **argv)
{
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    long rounds = (long)(900000 * scale);
    long *a = calloc(N, sizeof(long));
    long sum = 0;
    if (!a)
        return 1;
    for (long r = 0; r < rounds; r++)
        update(a, N, r);
    for (long i = 0; i < N; i++)
        sum += a[i];
    printf("diff_fix: %ld rounds, checksum %ld\n", rounds, sum);
    free(a);
    return 0;
}

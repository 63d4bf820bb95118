/*
 * dead_store.c - planted dead stores (wasp e2e test).
 *
 * Plants: fill() rewrites the whole array every round with the one store
 * instruction at the line marked "PLANT: dead-store"; sum() reads the array
 * (line marked "PLANT: dead-store-read") only after every 4th fill.
 *
 * Analytic program fraction: 75%. A sampled store of fill() in round r is
 * next accessed either by fill() in round r+1 (a store with no load between:
 * dead) or, when r % 4 == 3, by the load in sum() (not dead). All rounds of
 * fill() take the same time, so the time-weighted samples of its single
 * store instruction are spread evenly over the rounds: 3 of 4 are dead, all
 * 8 bytes. sum() has no store, so it adds no samples of its own; its load
 * is only ever a C2. Expected pairs: <fill, fill> with fraction ~75% and
 * <fill, sum> with fraction 0.
 *
 * Usage: dead_store [SCALE]   (SCALE multiplies the number of rounds)
 */
#include <stdio.h>
#include <stdlib.h>

#define N 2048

__attribute__((noinline)) void fill(long *a, long n, long r)
{
    for (long i = 0; i < n; i++)
        a[i] = r + i; /* PLANT: dead-store */
}

__attribute__((noinline)) long sum(const long *a, long n)
{
    long s = 0;
    for (long i = 0; i < n; i++)
        s += a[i]; /* PLANT: dead-store-read */
    return s;
}

int main(int argc, char **argv)
{
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    long rounds = (long)(1000000 * scale);
    long *a = calloc(N, sizeof(long));
    long total = 0;
    if (!a)
        return 1;
    for (long r = 0; r < rounds; r++) {
        fill(a, N, r);
        if ((r & 3) == 3)
            total += sum(a, N);
    }
    printf("dead_store: %ld rounds, checksum %ld\n", rounds, total);
    free(a);
    return 0;
}

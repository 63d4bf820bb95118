/*
 * inline_callers.c - a silent store in a function inlined into a function
 * inlined into main (wasp e2e test).
 *
 * Usage: inline_callers [SCALE]
 * SCALE x 200,000 rounds (SCALE 0: 2,000), each storing 7 into every cell:
 * after the first, every store is silent. The store's code is main's, but three functions name it: the
 * report must say set_cell's store, called from fill, called from main,
 * each at its line, in both modes; it showed set_cell alone, called from
 * libc, so the line to fix (fill's call, or main's) was nowhere.
 */
#include <stdio.h>
#include <stdlib.h>

#define CELLS 4096

static int cells[CELLS];

static inline __attribute__((always_inline)) void set_cell(int i, int v)
{
    cells[i] = v;   /* PLANT: inlined-store */
}

static inline __attribute__((always_inline)) void fill(int v)
{
    for (int i = 0; i < CELLS; i++)
        set_cell(i, v);   /* PLANT: fill-call */
}

int main(int argc, char **argv)
{
    long scale = argc > 1 ? atol(argv[1]) : 1, rounds = scale > 0 ? 200000L * scale : 2000;
    long sum = 0;
    for (long r = 0; r < rounds; r++) {
        fill(7);   /* PLANT: main-call */
        sum += cells[r % CELLS];
    }
    printf("%ld\n", sum);
    return 0;
}

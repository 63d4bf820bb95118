/*
 * diff.h - `wasp diff A B`: two runs' report models side by side.
 *
 * Pairs match when both contexts are symbolically equal (function, file and
 * line of every frame: merge.c's context identity, so instructions and
 * addresses may differ, as between a sampled and an exact run or two
 * builds). Shares are Eq. 2 (a pair's wasteful bytes over its run's
 * monitored bytes); delta = B - A.
 */
#ifndef WASP_DIFF_H
#define WASP_DIFF_H

#include <stddef.h>
#include "merge.h"

typedef struct diff_pair {
    const merge_ctx *watch, *trap;   /* from A when the pair is there, else from B */
    int in_a, in_b;
    double a_share, b_share, delta;
} diff_pair;

typedef struct diff_model {
    const char *a_name, *b_name;
    const merge_model *a, *b;
    double fraction_delta, approx_delta;
    diff_pair *pairs;                /* by |delta|, largest first */
    size_t npairs;
} diff_model;

/* Matches the pairs of two finished models. Returns 0, or -1 (out of memory). */
int diff_build(diff_model *d, const merge_model *a, const merge_model *b);

void diff_free(diff_model *d);

/* argv[0] is "diff". Returns the exit status: 0, or 2 after one
 * "[wasp] ERROR" line. */
int diff_main(int argc, char **argv);

#endif

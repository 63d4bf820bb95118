/*
 * out_collapsed.h - wasteful bytes by calling context as collapsed stacks,
 * the text format of FlameGraph's flamegraph.pl and of speedscope.
 */
#ifndef WASP_OUT_COLLAPSED_H
#define WASP_OUT_COLLAPSED_H

#include "merge.h"

#include <stdio.h>

/* Whose calling context a pair's bytes are charged to. */
enum collapsed_side {
    COLLAPSED_WASTEFUL,     /* the wasteful access: C1 for dead stores, C2 for silent ones */
    COLLAPSED_WATCH,        /* C1, where the sample armed the watchpoint */
    COLLAPSED_TRAP,         /* C2, where the watchpoint trapped */
};

/* The side that holds the wasteful access in this mode: a dead store is
 * the killed C1; a silent store or load is the redundant C2. */
enum collapsed_side collapsed_wasteful_side(const char *mode);

/* Writes one line per context, "root;...;leaf;[instruction] BYTES", where
 * BYTES is the wasteful (precise + approximate) bytes of every pair whose
 * side context it is; contexts without waste are left out. Returns 0, or
 * -1 on a write error or out of memory. */
int collapsed_write_report(FILE *f, const merge_model *m, enum collapsed_side side);

#endif

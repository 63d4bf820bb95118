/*
 * pairs.h - per-thread table <C1 watch context, C2 trap context> -> bytes.
 *
 * Updated in signal context: preallocated open addressing, no growth
 * there; the checkpoint thread moves a table past half full into a larger
 * one (pairs_move).
 */
#ifndef WASP_PAIRS_H
#define WASP_PAIRS_H

#include <stdint.h>

typedef struct pair_entry {
    uint32_t watch_ctx, trap_ctx;  /* cct node ids; watch_ctx 0 marks a free entry */
    uint64_t count, bytes, wasteful, approx;
} pair_entry;

typedef struct pair_table {
    pair_entry *entries;   /* entries[0, used), in arrival order */
    uint32_t *index;       /* open addressing: entry number + 1, 0 when free */
    uint32_t cap, used;
} pair_table;

int pairs_init(pair_table *p, uint32_t cap);
void pairs_destroy(pair_table *p);

/* Normal context, the owner's handler standing aside: moves p's entries
 * into bigger (from pairs_init with a larger capacity) and leaves what p
 * held in bigger, to be destroyed after the handler is back. */
void pairs_move(pair_table *p, pair_table *bigger);

/* Whether p is past half of what it can hold. */
int pairs_half_full(const pair_table *p);

/* Adds one trap's bytes to the pair; returns 0, or -1 when the table is full. */
int pairs_add(pair_table *p, uint32_t watch_ctx, uint32_t trap_ctx,
              uint32_t bytes, uint32_t wasteful, uint32_t approx);

#endif

/*
 * pairs.h - per-thread table <C1 watch context, C2 trap context> -> bytes.
 *
 * Updated in signal context: preallocated open addressing, no growth.
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

/* Adds one trap's bytes to the pair; returns 0, or -1 when the table is full. */
int pairs_add(pair_table *p, uint32_t watch_ctx, uint32_t trap_ctx,
              uint32_t bytes, uint32_t wasteful, uint32_t approx);

#endif

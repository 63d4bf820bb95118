/*
 * merge_internal.h - what merge.c shares with merge_code.c: the hash table
 * that interns contexts, pairs and code blobs, and growing arrays. Not for
 * the report writers; they read merge.h.
 */
#ifndef WASP_MERGE_INTERNAL_H
#define WASP_MERGE_INTERNAL_H

#include "merge.h"

#define MERGE_NONE SIZE_MAX

/* Open-addressing table from a hash to an index into one of the model's
 * arrays; equality is decided by the caller's callback. */
typedef struct merge_slot {
    uint64_t hash;
    size_t index;   /* MERGE_NONE when empty */
} merge_slot;

struct merge_map {
    merge_slot *slots;
    size_t cap, n;
};

typedef int (*merge_eq_fn)(const merge_model *m, size_t index, const void *key);

/* FNV-1a of len bytes, continuing from h (start with MERGE_FNV). */
#define MERGE_FNV 1469598103934665603ull
uint64_t merge_hash_more(uint64_t h, const void *data, size_t len);

size_t merge_map_find(const merge_model *m, const struct merge_map *map, uint64_t h,
                      merge_eq_fn eq, const void *key);
int merge_map_insert(struct merge_map *map, uint64_t h, size_t index);

/* a + b, or UINT64_MAX where it would wrap: counters from
 * corrupt-but-checksummed files must not wrap around. */
uint64_t merge_sat_add(uint64_t a, uint64_t b);

/* part / whole, 0 when whole is 0. */
double merge_ratio(uint64_t part, uint64_t whole);

/* merge_spread.c: the sampling interval of the program fraction and the
 * pair that may decide it, once the totals are summed and the pairs sorted. */
void merge_spread_finish(merge_model *m);

/* Makes room for one more element of size elem in *arr. 0, or -1. */
int merge_grow(void **arr, size_t *cap, size_t n, size_t elem);

/* ---- merge_code.c ---- */

/* One profile's codes while it is merged: ordered by start for lookups,
 * and which model code each became, so every code is interned once. */
typedef struct merge_code_src {
    const profile *p;
    size_t *order;      /* indices into p->codes by start; NULL without codes */
    size_t *interned;   /* p->codes index -> model code, MERGE_NONE when not yet */
} merge_code_src;

int merge_code_src_init(merge_code_src *s, const profile *p);
void merge_code_src_free(merge_code_src *s);

/* The model code holding pc (interned from the profile on first use) in
 * *out, MERGE_NO_CODE when no code of the profile holds it. 0, or -1 when
 * out of memory. */
int merge_code_at(merge_model *m, merge_code_src *s, uint64_t pc, size_t *out);

void merge_code_free_all(merge_model *m);

#endif

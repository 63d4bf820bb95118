/*
 * pairs.c - the pair table. Runs in signal context: no malloc, no locks.
 *
 * Entries are stored densely in arrival order and found through a small
 * open-addressing index, so memory grows with the pairs a thread really has
 * (hashing the 40-byte entries themselves touched all 640 KiB of a busy
 * thread's table, measured).
 */
#include "pairs.h"

#include <stddef.h>
#include <sys/mman.h>

static void *map_zeroed(uint64_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int pairs_init(pair_table *p, uint32_t cap)
{
    p->cap = cap;
    p->used = 0;
    p->entries = map_zeroed((uint64_t)cap * sizeof(pair_entry));
    p->index = map_zeroed((uint64_t)cap * sizeof(uint32_t));
    if (!p->entries || !p->index) {
        pairs_destroy(p);
        return -1;
    }
    return 0;
}

void pairs_destroy(pair_table *p)
{
    if (p->entries)
        munmap(p->entries, (uint64_t)p->cap * sizeof(pair_entry));
    if (p->index)
        munmap(p->index, (uint64_t)p->cap * sizeof(uint32_t));
    p->entries = NULL;
    p->index = NULL;
}

static uint32_t slot_of(const pair_table *p, uint32_t watch_ctx, uint32_t trap_ctx)
{
    uint64_t h = ((uint64_t)watch_ctx << 32 | trap_ctx) * 0x9E3779B97F4A7C15ULL;
    return (uint32_t)(h >> 32) & (p->cap - 1);
}

/* Keeps a quarter of the index free so probes stay short. */
static uint32_t pairs_limit(const pair_table *p)
{
    return p->cap - p->cap / 4;
}

int pairs_half_full(const pair_table *p)
{
    return __atomic_load_n(&p->used, __ATOMIC_RELAXED) > pairs_limit(p) / 2;
}

void pairs_move(pair_table *p, pair_table *bigger)
{
    uint32_t mask = bigger->cap - 1;
    for (uint32_t j = 0; j < p->used; j++) {
        const pair_entry *e = &p->entries[j];
        uint32_t i = slot_of(bigger, e->watch_ctx, e->trap_ctx);
        while (bigger->index[i])
            i = (i + 1) & mask;
        bigger->entries[j] = *e;
        bigger->index[i] = j + 1;
    }
    bigger->used = p->used;
    pair_table old = *p;
    *p = *bigger;
    *bigger = old;
}

int pairs_add(pair_table *p, uint32_t watch_ctx, uint32_t trap_ctx,
              uint32_t bytes, uint32_t wasteful, uint32_t approx)
{
    uint32_t mask = p->cap - 1;
    for (uint32_t i = slot_of(p, watch_ctx, trap_ctx), n = 0; n < p->cap; i = (i + 1) & mask, n++) {
        pair_entry *e;
        if (p->index[i] == 0) {
            if (p->used >= pairs_limit(p))
                return -1;
            e = &p->entries[p->used++];
            e->watch_ctx = watch_ctx;
            e->trap_ctx = trap_ctx;
            p->index[i] = p->used;
        } else {
            e = &p->entries[p->index[i] - 1];
            if (e->watch_ctx != watch_ctx || e->trap_ctx != trap_ctx)
                continue;
        }
        e->count++;
        e->bytes += bytes;
        e->wasteful += wasteful;
        e->approx += approx;
        return 0;
    }
    return -1;
}

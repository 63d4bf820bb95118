/*
 * pairs.c - the pair table. Runs in signal context: no malloc, no locks.
 */
#include "pairs.h"

#include <stddef.h>
#include <sys/mman.h>

int pairs_init(pair_table *p, uint32_t cap)
{
    p->cap = cap;
    p->used = 0;
    p->entries = mmap(NULL, (uint64_t)cap * sizeof(pair_entry), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p->entries == MAP_FAILED) {
        p->entries = NULL;
        return -1;
    }
    return 0;
}

void pairs_destroy(pair_table *p)
{
    if (p->entries)
        munmap(p->entries, (uint64_t)p->cap * sizeof(pair_entry));
    p->entries = NULL;
}

int pairs_add(pair_table *p, uint32_t watch_ctx, uint32_t trap_ctx,
              uint32_t bytes, uint32_t wasteful, uint32_t approx)
{
    uint64_t h = ((uint64_t)watch_ctx << 32 | trap_ctx) * 0x9E3779B97F4A7C15ULL;
    uint32_t mask = p->cap - 1;
    /* Keep a quarter free so probes stay short. */
    for (uint32_t i = (uint32_t)(h >> 32) & mask, n = 0; n < p->cap; i = (i + 1) & mask, n++) {
        pair_entry *e = &p->entries[i];
        if (e->watch_ctx == 0) {
            if (p->used >= p->cap - p->cap / 4)
                return -1;
            e->watch_ctx = watch_ctx;
            e->trap_ctx = trap_ctx;
            p->used++;
        } else if (e->watch_ctx != watch_ctx || e->trap_ctx != trap_ctx) {
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

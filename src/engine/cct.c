/*
 * cct.c - calling context tree. Runs in signal context: no malloc, no locks.
 */
#include "cct.h"

#include <stddef.h>
#include <sys/mman.h>

static void *map_zeroed(uint64_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int cct_init(cct *t, uint32_t cap)
{
    t->cap = cap;
    /* A power of two for the mask below; a quarter of the nodes keeps chains
     * short while a busy thread touches 64 KiB of buckets, not 256. */
    t->nbuckets = cap / 4 ? cap / 4 : 1;
    t->used = 1;        /* node 0 is the root */
    t->nodes = map_zeroed((uint64_t)cap * sizeof(cct_node));
    t->buckets = map_zeroed((uint64_t)t->nbuckets * sizeof(uint32_t));
    if (!t->nodes || !t->buckets) {
        cct_destroy(t);
        return -1;
    }
    return 0;
}

void cct_destroy(cct *t)
{
    if (t->nodes)
        munmap(t->nodes, (uint64_t)t->cap * sizeof(cct_node));
    if (t->buckets)
        munmap(t->buckets, (uint64_t)t->nbuckets * sizeof(uint32_t));
    t->nodes = NULL;
    t->buckets = NULL;
}

static uint32_t bucket_of(const cct *t, uint32_t parent, frame_key f)
{
    uint64_t h = f.id * 0x9E3779B97F4A7C15ULL ^ (f.aux + parent) * 0xC2B2AE3D27D4EB4FULL;
    return (uint32_t)(h >> 32) & (t->nbuckets - 1);
}

static uint32_t child_of(cct *t, uint32_t parent, frame_key f)
{
    uint32_t b = bucket_of(t, parent, f);
    for (uint32_t i = t->buckets[b]; i; i = t->nodes[i].next) {
        const cct_node *n = &t->nodes[i];
        if (n->parent == parent && n->frame.id == f.id && n->frame.aux == f.aux)
            return i;
    }
    if (t->used >= t->cap)
        return 0;
    uint32_t i = t->used++;
    t->nodes[i] = (cct_node){ .frame = f, .parent = parent, .next = t->buckets[b] };
    t->buckets[b] = i;
    return i;
}

int cct_half_full(const cct *t)
{
    return __atomic_load_n(&t->used, __ATOMIC_RELAXED) > t->cap / 2;
}

void cct_move(cct *t, cct *bigger)
{
    for (uint32_t i = 0; i < t->used; i++)
        bigger->nodes[i] = t->nodes[i];
    bigger->used = t->used;
    /* Buckets are by (parent, frame) and the mask is new: chains rebuilt,
     * later nodes first as insertion left them. */
    for (uint32_t i = 1; i < bigger->used; i++) {
        cct_node *n = &bigger->nodes[i];
        uint32_t b = bucket_of(bigger, n->parent, n->frame);
        n->next = bigger->buckets[b];
        bigger->buckets[b] = i;
    }
    cct old = *t;
    *t = *bigger;
    *bigger = old;
}

uint32_t cct_intern(cct *t, const frame_key *leaf_first, int n)
{
    uint32_t node = 0;
    for (int i = n - 1; i >= 0; i--) {
        node = child_of(t, node, leaf_first[i]);
        if (!node)
            return 0;
    }
    return node;
}

int cct_path(const cct *t, uint32_t node, frame_key *out, int max)
{
    int n = 0;
    while (node && node < t->used && n < max) {
        out[n++] = t->nodes[node].frame;
        node = t->nodes[node].parent;
    }
    return n;
}

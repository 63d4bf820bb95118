/*
 * cct.h - a per-thread calling context tree (paper §5.6).
 *
 * Interning runs in signal context: storage is mmap'd up front, insertion
 * never allocates, and a full tree refuses new paths; the checkpoint thread
 * moves a tree past half full into a larger one (cct_move).
 * Only the owning thread inserts; readers (the profile writer) run after the
 * thread has stopped handling signals.
 */
#ifndef WASP_CCT_H
#define WASP_CCT_H

#include <stdint.h>

/* One frame as a front end names it: a native pc, or (method, bci) for Java. */
typedef struct frame_key {
    uint64_t id;
    uint64_t aux;
} frame_key;

typedef struct cct_node {
    frame_key frame;
    uint32_t parent;   /* 0 for children of the root; node 0 is the root */
    uint32_t next;     /* next node in the same hash bucket */
} cct_node;

typedef struct cct {
    cct_node *nodes;
    uint32_t *buckets;
    uint32_t cap, used, nbuckets;
} cct;

int cct_init(cct *t, uint32_t cap);
void cct_destroy(cct *t);

/* Interns a path given leaf first; returns the leaf's node id, 0 when full. */
uint32_t cct_intern(cct *t, const frame_key *leaf_first, int n);

/* Normal context, the owner's handler standing aside: moves t's nodes into
 * bigger (from cct_init with a larger capacity), ids unchanged, and leaves
 * what t held in bigger, to be destroyed after the handler is back. */
void cct_move(cct *t, cct *bigger);

/* Whether t is past half of its nodes. */
int cct_half_full(const cct *t);

/* Writes the path of node, leaf first, into out; returns its length. */
int cct_path(const cct *t, uint32_t node, frame_key *out, int max);

#endif

/*
 * watch.h - the debug-register slots of one thread and reservoir replacement.
 *
 * Pure logic, signal-safe, no system calls: which slot a new sample takes
 * (paper §5.2) and what each slot is watching. monitor.c decides when to
 * arm and perf.c arms (perf_arm_breakpoint).
 */
#ifndef WASP_WATCH_H
#define WASP_WATCH_H

#include <stdint.h>
#include "options.h"

typedef struct watch_slot {
    int armed;
    int priming;        /* armed BEFORE the sampled access ran: absorb its own trap */
    int code;           /* a code breakpoint at sample_pc: the sampled access has not run (decode.h) */
    int guard;          /* a code breakpoint at a sample's pc: its guarded access did not run first */
    uint8_t behind;     /* a guard of an access behind the pc (past a branch target) */
    int partner;        /* 1 + the guard of a guarded slot, or 1 + the slot a guard guards; 0: none */
    uint64_t addr;      /* watched bytes: [addr, addr+len), len 1/2/4/8, aligned */
    uint32_t len;
    uint8_t fp;         /* enum access_fp of the sampled access */
    uint8_t string;     /* sampled inside a rep stos/movs: it fills the watch element by element */
    uint8_t span;       /* the sampled access's bytes per watched byte (a 32-byte store watched
                           through 8 of them: 4); its pairs count that many times their bytes */
    uint8_t passed_over; /* priming: traps by other instructions before the sampled access ran */
    uint8_t pending;    /* watched bytes whose pairs have not ended (bit k: addr + k) */
    uint8_t paired;     /* a pair was counted: its sample is in the weight stats */
    uint8_t skip_runs;  /* a code breakpoint: runs of sample_pc it lets by before it takes one */
    uint64_t value;     /* bytes at addr when armed (little-endian, len bytes) */
    uint32_t ctx;       /* C1: cct node of the sampled access */
    uint64_t sample_pc; /* pc of the sampled access */
    uint64_t seen;      /* reservoir: samples offered since the slot was last free */
    double rate;        /* accesses of the wanted kind per instruction where the sample drew it */
    double weight;      /* 1 / the chance this watch was armed and has survived the reservoir */
    uint64_t epoch;     /* engine epoch when armed */
} watch_slot;

typedef struct watch_set {
    watch_slot slot[OPTIONS_MAX_SLOTS];
    int nslots;
    uint64_t rng;       /* xorshift state, per thread */
    double pick_weight; /* the weight a watch armed in the slot watch_pick returned starts with */
} watch_set;

void watch_init(watch_set *w, int nslots, uint64_t seed);

/*
 * Offers a new sample to the slots: a free slot takes it; otherwise each
 * armed slot, visited in random order, takes it with probability 1/seen.
 * Every armed slot counts the sample either way. Returns the slot to arm,
 * or -1 when the sample is not monitored.
 *
 * Weights: a watch whose next access comes many samples later has to
 * survive each of them, so the pairs it finds are seen with a chance that
 * shrinks with the distance (about 1/samples). Each slot keeps 1 / (the
 * chance its sample was armed × the chance it survived every sample since),
 * updated here exactly as the draw goes; a pair found counts its bytes times
 * that weight (monitor.c), so that pairs far apart weigh as much, in
 * expectation, as the samples they stand for (Horvitz-Thompson).
 */
int watch_pick(watch_set *w);

/* The same with at most max_armed slots armed (the overhead budget's
 * limit, budget.h): past it, a sample can only replace an armed watch.
 * max_armed <= 0 means all slots. */
int watch_pick_within(watch_set *w, int max_armed);

/* A free slot other than `not`, for a guard; -1 when none. */
int watch_free_slot(const watch_set *w, int not);

/* Frees a slot after its trap (its reservoir restarts, paper §5.2). */
void watch_release(watch_set *w, int i);

/* Picks the watched bytes inside an access: a naturally aligned block of
 * the largest size (8/4/2/1) that fits in [addr, addr+size), the draw-th
 * of the blocks of that size there (mod their number). A wide access's
 * pairs stand for all its bytes (monitor.c): drawn among its blocks, the
 * watched one favours no position inside it (always the first did: C2's
 * vector stores of an odd/even pattern read 38.8% for 50%). Returns 0, or
 * -1 when no block fits (size 0). */
int watch_fit(uint64_t addr, uint32_t size, uint64_t draw, uint64_t *waddr, uint32_t *wlen);

uint64_t watch_random(watch_set *w);

/* The mask of a watch's len bytes (bit k: byte k), len <= 8. */
static inline uint8_t watch_bytes_mask(uint32_t len)
{
    return len >= 8 ? 0xff : (uint8_t)((1u << len) - 1);
}

/* The bytes of [addr, addr+size) among the watch's (bit k: s->addr + k). */
uint8_t watch_touched(const watch_slot *s, uint64_t addr, uint64_t size);

/* Shrinks a watch to the smallest aligned block (1/2/4/8 bytes) that holds
 * its pending bytes, so that accesses to bytes whose pairs ended no longer
 * trap: the half a 4-byte store left of an 8-byte watch is watched alone. */
void watch_narrow(watch_slot *s);

#endif

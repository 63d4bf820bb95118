/*
 * detect.h - the three definitions of paper §4, applied at a trap.
 *
 * Pure and signal-safe: given what the slot watched and what the trapping
 * instruction did, decide whether a pair ends here and how many of its bytes
 * were wasteful.
 */
#ifndef WASP_DETECT_H
#define WASP_DETECT_H

#include <stdint.h>
#include "options.h"
#include "watch.h"

typedef struct detect_result {
    int record;          /* a <C1,C2> pair ends here and is counted */
    int keep_watching;   /* the watch stays armed (silent-load: a store in between;
                            bytes whose pairs have not ended) */
    uint8_t ended;       /* the watched bytes whose pairs end here (bit k: addr + k) */
    uint32_t bytes;      /* bytes the pair monitored: those ended */
    uint32_t wasteful;   /* dead or precisely silent bytes */
    uint32_t approx;     /* silent only within the FP tolerance */
} detect_result;

/* kind: enum access_kind of the trapping instruction; touched: the watched
 * bytes it accessed (bit k: addr + k; a 4-byte field store into an 8-byte
 * watch touches 4): those of them still pending end their pairs here, the
 * rest of w->pending stays watched; now: the watched bytes after it ran
 * (what it stored, or what it loaded). */
detect_result detect_on_trap(enum wasp_mode mode, const watch_slot *w, uint8_t kind,
                             uint8_t touched, uint64_t now, double fp_tolerance);

/* Whether two values of len bytes are equal as FP elements of size fp within
 * a relative tolerance (exactly equal bit patterns are handled by the caller). */
int detect_fp_close(uint64_t a, uint64_t b, uint32_t len, uint8_t fp, double tolerance);

#endif

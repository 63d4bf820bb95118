/*
 * locate.h - the memory access that ended at the interrupted pc.
 */
#ifndef WASP_LOCATE_H
#define WASP_LOCATE_H

#include <ucontext.h>
#include "access.h"
#include "drops.h"
#include "engine.h"

/* Signal context. Decodes the instruction that ends at the pc of uc (a trap
 * on the watched bytes [lo, hi)), using the decode cache first and the front
 * end's code bounds only on a miss; where no boundary is known, the
 * instruction ending at the pc that touches [lo, hi). */
enum drop_reason locate_access_before(const engine_frontend *fe, const ucontext_t *uc,
                                      uint64_t lo, uint64_t hi, mem_access *out);

/* Signal context. The access a timer sample takes (decode_access_sampled:
 * draw picks among its block's), cache first, bounds only on a miss. */
enum drop_reason locate_sampled_access(const engine_frontend *fe, const ucontext_t *uc, uint8_t want,
                                       uint64_t draw, mem_access *out);

#endif

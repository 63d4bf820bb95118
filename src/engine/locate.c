/*
 * locate.c - from an interrupted pc to the access that just retired.
 *
 * Signal context. Both samples and data-breakpoint traps land right after
 * the accessing instruction; the bounds lookup (an unwind-table search) is
 * the expensive step, so it is skipped whenever the decode cache already
 * knows the pc.
 */
#include "locate.h"

#include "code_image.h"
#include "decode.h"

/* The kept image of the code b names, built on its first sweep. */
static const code_image *image_of(const code_bounds *b)
{
    return code_image_of(b->code_start, b->code_end, b->code_id);
}

/* Whether the access touched the watched bytes [lo, hi). */
static int touches(const mem_access *a, uint64_t lo, uint64_t hi)
{
    return a->addr < hi && lo < a->addr + a->size;
}

enum drop_reason locate_access_before(const engine_frontend *fe, const ucontext_t *uc,
                                      uint64_t lo, uint64_t hi, mem_access *out)
{
    uint64_t rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    enum drop_reason r = DROP_NO_BOUNDARY;
    code_bounds b;

    if (decode_access_before_cached(rip, uc, out, &r) == 0 &&
        fe->bounds(uc, &b) == 0 && b.start < rip && rip <= b.end)
        r = decode_access_before(rip, b.start, b.end, image_of(&b), uc, out);
    /* At a branch target: a jump there touches no data, so the instruction
     * before rip fired the breakpoint if it touched its bytes. Dropping
     * every such trap lost every pair ended by a store at the end of an
     * if's arm (tests/e2e bias_cond_store; Java's allocation zeroing
     * before a slow path's return). */
    if (r == DROP_NONE && out->at_target && !touches(out, lo, hi))
        r = DROP_BRANCH_TARGET;
    /* It wrote its own base or index (`mov (%rax),%rax`: list walks, Java's
     * field loads), so the registers no longer give its address; but it is
     * the instruction that fired the breakpoint (not at a target, where
     * decode_access_before says branch_target), so it touched the watched
     * bytes: start it there. Dropped, a pair ended by such a load was lost
     * (tests/e2e bias_chase). */
    if (r == DROP_ADDR_CLOBBERED && out->clobbered) {
        out->addr = lo;
        r = DROP_NONE;
    }
    if (r == DROP_NO_BOUNDARY)
        r = decode_access_ending_at(rip, uc, lo, hi, out);
    /* Not the instruction before rip: a rep stos/movs (memset, memcpy)
     * interrupted between iterations, pc still at it? */
    if ((r != DROP_NONE || !touches(out, lo, hi)) &&
        decode_string_in_progress(rip, uc, lo, hi, out) == DROP_NONE)
        r = DROP_NONE;
    return r;
}

enum drop_reason locate_sampled_access(const engine_frontend *fe, const ucontext_t *uc, uint8_t want,
                                       uint64_t draw, mem_access *out)
{
    uint64_t rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    enum drop_reason r;
    code_bounds b;

    if (decode_access_sampled_cached(rip, want, draw, uc, out, &r))
        return r;
    int known = fe->bounds(uc, &b);
    if (known < 0 || !(b.start <= rip && rip <= b.end)) {
        out->unplaced = known == -1;
        return DROP_NO_BOUNDARY;
    }
    return decode_access_sampled(rip, b.start, b.end, image_of(&b), want, draw, uc, out);
}

/*
 * decode_sweep.c - instruction boundaries: which instruction ends at a pc,
 * and which access a timer sample stands for, found by sweeping forward
 * from a known boundary and cached per pc.
 *
 * Runs in signal context: no malloc, no locks, no stdio. The caches are
 * lock-free tables of single 64-bit words, inserted with compare-and-swap.
 */
#include <errno.h>
#include <sys/mman.h>

#include "code_image.h"
#include "decode_internal.h"

/* Cache: one atomic word per rip. Bits 0..46 rip (user space), 48..55
 * distance back to the start of the instruction ending at rip (in the
 * sample cache: to the start of rip's region), 56..58 the state (enum
 * decode_state), 59 DECODE_LOOP, 60..63 key flags. 0 means empty (rip is never 0). */
#define DECODE_CACHE_PROBES 32u
#define DECODE_RIP_MASK ((1ull << 47) - 1)
#define DECODE_OFF_SHIFT 48
#define DECODE_OFF_MASK 0xFFull          /* sampled lookups look back up to 255 bytes */
#define DECODE_STATE_SHIFT 56
#define DECODE_STATE_MASK 0x7ull
#define DECODE_S(state) ((uint64_t)(state) << DECODE_STATE_SHIFT)
#define DECODE_LOOP (1ull << 59)           /* sample cache: rip's region starts at a loop head */
#define DECODE_F_WANT_LOAD (1ull << 60)    /* these three are part of the key in the sample cache */
#define DECODE_F_SKIP_RSP (1ull << 61)
#define DECODE_F_SKIP_RIP (1ull << 62)
#define DECODE_F_SKIP_R15 (1ull << 63)
#define DECODE_KEY_MASK (DECODE_RIP_MASK | DECODE_F_WANT_LOAD | DECODE_F_SKIP_RSP | DECODE_F_SKIP_RIP | \
                         DECODE_F_SKIP_R15)

/* What an entry says. */
enum decode_state {
    DECODE_FOUND = 0,      /* an instruction ends at rip; in the sample cache, a region with accesses */
    DECODE_TARGET,         /* rip is a branch target */
    DECODE_NOBOUND,        /* no instruction ends at rip */
    DECODE_FAILED,         /* bytes before rip do not decode */
    DECODE_NONE_FOUND,     /* no access of the wanted kind in rip's region */
};

static unsigned decode_state_of(uint64_t e)
{
    return (unsigned)((e >> DECODE_STATE_SHIFT) & DECODE_STATE_MASK);
}

static uint64_t decode_cache[DECODE_CACHE_SLOTS];        /* trap: instruction ending at rip */
static uint64_t decode_sample_cache[DECODE_CACHE_SLOTS]; /* sample: where rip's region starts */
static uint64_t decode_target_cache[DECODE_CACHE_SLOTS]; /* sample: the last branch target before it */
static uint64_t decode_end_cache[DECODE_CACHE_SLOTS];    /* sample: where an if's arm ends its region */

/* ---- previous-instruction cache --------------------------------------- */

static size_t decode_hash(uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - DECODE_CACHE_BITS));
}

static uint64_t decode_cache_get(uint64_t *table, uint64_t key)
{
    size_t h = decode_hash(key);
    for (unsigned i = 0; i < DECODE_CACHE_PROBES; i++) {
        uint64_t e = __atomic_load_n(&table[(h + i) & (DECODE_CACHE_SLOTS - 1)], __ATOMIC_ACQUIRE);
        if (e == 0 || (e & DECODE_KEY_MASK) == key)
            return e;
    }
    return 0;
}

uint64_t decode_cache_lookup(uint64_t *table, uint64_t key)
{
    uint64_t e = decode_cache_get(table, key);
    return (e & DECODE_KEY_MASK) == key ? e : 0;
}

void decode_cache_put(uint64_t *table, uint64_t e)
{
    uint64_t key = e & DECODE_KEY_MASK;
    size_t h = decode_hash(key);
    for (unsigned i = 0; i < DECODE_CACHE_PROBES; i++) {
        uint64_t cur = 0;
        uint64_t *slot = &table[(h + i) & (DECODE_CACHE_SLOTS - 1)];
        if (__atomic_compare_exchange_n(slot, &cur, e, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return;
        if ((cur & DECODE_KEY_MASK) == key)
            return; /* another thread cached the same rip */
    }
}

/* Target of a direct relative jmp/jcc/call/loop/xbegin, 0 for anything else. */
uint64_t decode_branch_target(const ZydisDecodedInstruction *in, uint64_t next)
{
    if (!in->raw.imm[0].is_relative)
        return 0;
    return next + (uint64_t)in->raw.imm[0].value.s;
}

/* The instruction at pc of code ending at end, for a sweep: from the
 * code's kept image (code_image.c) when it holds it, else decoded (what a
 * sweep reads of it: length, category, branch target). */
static int sweep_decode(code_image_cursor *c, uint64_t pc, uint64_t end, ZydisDecodedInstruction *in)
{
    return code_image_at(c, pc, end, in) || decode_insn_within(pc, end, in);
}

/* Linear sweep of the function: x86 only decodes forwards, and the function
 * start is the one boundary we trust. Returns a cache entry for rip. */
uint64_t decode_sweep(uint64_t rip, uint64_t start, uint64_t end, const code_image *img)
{
    uint64_t limit = end - start > DECODE_SWEEP_MAX ? start + DECODE_SWEEP_MAX : end;
    uint64_t pc = start, off = 0, state = DECODE_FOUND;
    code_image_cursor c;
    code_image_cursor_init(&c, img, start);
    while (pc < limit) {
        ZydisDecodedInstruction in;
        if (!sweep_decode(&c, pc, end, &in)) {
            if (pc >= rip)
                break; /* data or padding after rip: the answer is already known */
            return rip | DECODE_S(DECODE_FAILED);
        }
        uint64_t next = pc + in.length;
        if (next == rip)
            off = in.length;
        else if (pc < rip && next > rip)
            return rip | DECODE_S(DECODE_NOBOUND); /* rip is inside an instruction */
        if (decode_branch_target(&in, next) == rip)
            state = DECODE_TARGET;
        pc = next;
    }
    if (off == 0)
        return rip | DECODE_S(DECODE_NOBOUND); /* beyond the sweep limit */
    return rip | (off << DECODE_OFF_SHIFT) | DECODE_S(state);
}

static enum drop_reason decode_entry_reason(uint64_t e)
{
    switch (decode_state_of(e)) {
    case DECODE_FAILED: return DROP_DECODE_FAILED;
    case DECODE_NOBOUND: return DROP_NO_BOUNDARY;
    case DECODE_TARGET: return DROP_BRANCH_TARGET;
    case DECODE_NONE_FOUND: return DROP_NOT_MEMORY;
    default: return DROP_NONE;
    }
}

/* The instruction ending at rip. At a branch target it is still the only
 * candidate for a trap: a jump there touches no data, so a data breakpoint
 * that fired at rip fired on the instruction before it, if that one can
 * have touched the watched bytes; the caller, which knows them, decides
 * (at_target). A jump's other way there is a call's push, which the
 * caller's check turns away too. */
static enum drop_reason decode_from_entry(uint64_t rip, uint64_t e, const ucontext_t *uc, mem_access *out)
{
    enum drop_reason r = decode_entry_reason(e);
    int at_target = r == DROP_BRANCH_TARGET;
    if (r != DROP_NONE && !at_target)
        return r;
    size_t off = (size_t)((e >> DECODE_OFF_SHIFT) & DECODE_OFF_MASK);
    uint64_t pc = rip - off;
    decode_insn d;
    /* At most off bytes: never read past rip. */
    if (!ZYAN_SUCCESS(decode_full((const void *)(uintptr_t)pc, off < DECODE_MAX_LEN ? off : DECODE_MAX_LEN, &d)))
        return DROP_DECODE_FAILED;
    if (d.in.length != off)
        return DROP_DECODE_FAILED;  /* the code changed since it was cached */
    r = decode_live(&d, pc, uc, 1, out);
    if (at_target && r != DROP_NONE)
        return DROP_BRANCH_TARGET;
    out->at_target = (uint8_t)at_target;
    return r;
}

int decode_access_before_cached(uint64_t rip, const ucontext_t *uc, mem_access *out,
                                enum drop_reason *reason)
{
    if (!decode_is_ready() || (rip & ~DECODE_RIP_MASK))
        return 0;
    uint64_t e = decode_cache_lookup(decode_cache, rip);
    if (!e)
        return 0;
    *reason = decode_from_entry(rip, e, uc, out);
    return 1;
}

enum drop_reason decode_access_before(uint64_t rip, uint64_t func_start, uint64_t func_end, const code_image *img,
                                      const ucontext_t *uc, mem_access *out)
{
    if (!decode_is_ready())
        return DROP_DECODE_FAILED;
    /* rip == func_end is tolerated: the last instruction may be the access. */
    if (rip <= func_start || rip > func_end || (rip & ~DECODE_RIP_MASK))
        return DROP_NO_BOUNDARY;
    uint64_t e = decode_cache_lookup(decode_cache, rip);
    if (!e) {
        e = decode_sweep(rip, func_start, func_end, img);
        decode_cache_put(decode_cache, e);
    }
    return decode_from_entry(rip, e, uc, out);
}

/* ---- sampled access: the region around rip --------------------------- */

/* The start of the part of the region starting at region that rip is in:
 * parts of DECODE_PART_INSNS instructions starting within
 * DECODE_PART_BYTES of the part's start, counted from the region's start,
 * so that every pc of a part draws from the same accesses (a window
 * sliding with the pc gave the accesses at a long region's end more
 * samples than those at its start), stepping over arms as the region's
 * scan does (decode_choose.c). 0 if the code does not decode. */
static uint64_t decode_part_start(uint64_t region, uint64_t rip)
{
    uint64_t pc = region, part = region;
    unsigned in_part = 0;
    for (;;) {
        if (in_part == DECODE_PART_INSNS || pc - part >= DECODE_PART_BYTES) {
            part = pc;
            in_part = 0;
        }
        if (pc >= rip)
            return part;
        ZydisDecodedInstruction in;
        if (!decode_insn_within(pc, rip, &in))
            return 0;
        in_part++;
        uint64_t else_at, arm = decode_arm_end(&in, pc + in.length, &else_at);
        pc = arm ? arm : pc + in.length;   /* as scan_region steps: over arms */
    }
}

/* Sweeps the whole function once: is rip an instruction start, and where
 * does its region start? After the last instruction before rip that ends
 * a region (decode_ends_region), or at the last loop head at or before
 * rip: the target of a conditional backward branch. The region ends at
 * the first loop head after rip (*region_end), wherever its back edge is:
 * a sample there starts its region there, and a loop closed out of line
 * (brotli's inlined 8-byte compare: `je` out past the return, `jne` back
 * to the head) has its back edge beyond the region's own scan, which
 * would run on into the loop and count instructions that only samples
 * starting at the head draw from. An if's arm
 * (decode_arm.c) before rip is stepped over, what it holds belonging to
 * no region but its own; rip inside one is in the arm's region, which
 * ends with it (*region_end; 0 for a region that ends as decode_choose.c
 * scans). Other branch targets do not start a region (decode_choose.c
 * says why); the last of them in rip's part, at or before rip, goes into
 * *target (0: none). */
uint64_t decode_sweep_sampled(uint64_t rip, uint64_t start, uint64_t end, const code_image *img, uint8_t want,
                              uint64_t key, uint64_t *target, uint64_t *region_end)
{
    uint64_t limit = end - start > DECODE_SWEEP_MAX ? start + DECODE_SWEEP_MAX : end;
    uint64_t pc = start, region = start, last = 0, head = 0;
    int boundary = rip == start, loop = 0;
    code_image_cursor c;
    code_image_cursor_init(&c, img, start);
    *target = *region_end = 0;
    while (pc < limit) {
        ZydisDecodedInstruction in;
        if (!sweep_decode(&c, pc, end, &in)) {
            if (pc >= rip)
                break;
            return key | DECODE_S(DECODE_FAILED);
        }
        uint64_t next = pc + in.length, to = decode_branch_target(&in, next), else_at = 0, arm = 0;
        if (pc < rip) {
            if (next > rip)
                return key | DECODE_S(DECODE_NOBOUND);
            boundary |= next == rip;
            if (decode_ends_region(&in, pc, next) && next > region) {
                region = next;
                loop = 0;
            }
            arm = decode_arm_end(&in, next, &else_at);
        }
        if (arm && arm <= rip) {
            boundary |= arm == rip;
            pc = arm;   /* over the arm: its code is not rip's region's */
            continue;
        }
        if (arm) {      /* rip is in the arm */
            int in_else = else_at && rip >= else_at;
            region = in_else ? else_at : next;
            loop = 0;   /* an arm runs on some passes: its next run may be far */
            *region_end = in_else || !else_at ? arm : else_at;
        }
        if (to && to <= rip) {
            if (decode_is_loop_head(&in, pc, to) && to >= region) {
                region = to;   /* a head right after a jump is still a head */
                loop = 1;
            }
            if (to > last)
                last = to;
        } else if (to && decode_is_loop_head(&in, pc, to) && (!head || to < head)) {
            head = to;
        }
        pc = next;
    }
    if (!boundary)
        return key | DECODE_S(DECODE_NOBOUND);
    if (head && (!*region_end || head < *region_end))
        *region_end = head;
    uint64_t part = decode_part_start(region, rip);
    if (!part)
        return key | DECODE_S(DECODE_FAILED);
    if (rip - part > DECODE_OFF_MASK)
        return key | DECODE_S(DECODE_NOBOUND);
    if (*region_end && *region_end - rip > DECODE_OFF_MASK)
        *region_end = 0;   /* past the part's last byte: the part ends first */
    if (decode_region_candidates(part, *region_end, want) == 0)
        return key | DECODE_S(DECODE_NONE_FOUND);
    if (last > part)
        *target = last;
    return key | ((rip - part) << DECODE_OFF_SHIFT) | DECODE_S(DECODE_FOUND) | (loop ? DECODE_LOOP : 0);
}

/* The target entry that goes with a region entry: where the last branch
 * target in rip's part at or before it is, as an offset back from rip, or
 * DECODE_NONE_FOUND for none. */
static uint64_t decode_target_entry(uint64_t key, uint64_t rip, uint64_t target)
{
    return target ? key | ((rip - target) << DECODE_OFF_SHIFT) | DECODE_S(DECODE_FOUND)
               : key | DECODE_S(DECODE_NONE_FOUND);
}

/* The end entry that goes with a region entry: how far after rip an arm's
 * boundary or a loop head ends its region, or DECODE_NONE_FOUND for none. */
static uint64_t decode_end_entry(uint64_t key, uint64_t rip, uint64_t end)
{
    return end ? key | ((end - rip) << DECODE_OFF_SHIFT) | DECODE_S(DECODE_FOUND)
               : key | DECODE_S(DECODE_NONE_FOUND);
}

/* A sample's cached region, target and end: the access drawn from it. */
static enum drop_reason decode_sample_from_entry(uint64_t rip, uint64_t e, uint64_t te, uint64_t ee,
                                                 uint8_t want, uint64_t draw, const ucontext_t *uc,
                                                 mem_access *out)
{
    enum drop_reason r = decode_entry_reason(e);
    if (r != DROP_NONE)
        return r;
    uint64_t first = rip - ((e >> DECODE_OFF_SHIFT) & DECODE_OFF_MASK);
    uint64_t target = decode_state_of(te) == DECODE_FOUND ? rip - ((te >> DECODE_OFF_SHIFT) & DECODE_OFF_MASK) : 0;
    uint64_t end = decode_state_of(ee) == DECODE_FOUND ? rip + ((ee >> DECODE_OFF_SHIFT) & DECODE_OFF_MASK) : 0;
    r = decode_choose(first, target, end, rip, want, draw, uc, out);
    out->loop = r == DROP_NONE && (e & DECODE_LOOP) != 0;
    return r;
}

/* A sample's three cache entries, or 0 when any one a found region needs
 * is missing (evicted or not yet inserted): then the caller sweeps. */
static uint64_t decode_sample_lookup(uint64_t key, uint64_t *te, uint64_t *ee)
{
    uint64_t e = decode_cache_lookup(decode_sample_cache, key);
    *te = *ee = 0;
    if (!e || decode_state_of(e) != DECODE_FOUND)
        return e;
    *te = decode_cache_lookup(decode_target_cache, key);
    *ee = decode_cache_lookup(decode_end_cache, key);
    return *te && *ee ? e : 0;
}

static uint64_t decode_sample_key(uint64_t rip, uint8_t want)
{
    return rip | ((want & ACCESS_RMW) == ACCESS_LOAD ? DECODE_F_WANT_LOAD : 0) |
           (want & ACCESS_SKIP_RSP ? DECODE_F_SKIP_RSP : 0) | (want & ACCESS_SKIP_RIP ? DECODE_F_SKIP_RIP : 0) |
           (want & ACCESS_SKIP_R15 ? DECODE_F_SKIP_R15 : 0);
}

int decode_access_sampled_cached(uint64_t rip, uint8_t want, uint64_t draw, const ucontext_t *uc,
                                 mem_access *out, enum drop_reason *reason)
{
    if (!decode_is_ready() || (rip & ~DECODE_RIP_MASK))
        return 0;
    uint64_t key = decode_sample_key(rip, want), te, ee;
    uint64_t e = decode_sample_lookup(key, &te, &ee);
    if (!e)
        return 0;
    *reason = decode_sample_from_entry(rip, e, te, ee, want, draw, uc, out);
    return 1;
}

enum drop_reason decode_access_sampled(uint64_t rip, uint64_t func_start, uint64_t func_end, const code_image *img,
                                       uint8_t want, uint64_t draw, const ucontext_t *uc, mem_access *out)
{
    if (!decode_is_ready())
        return DROP_DECODE_FAILED;
    if (rip < func_start || rip > func_end || (rip & ~DECODE_RIP_MASK))
        return DROP_NO_BOUNDARY;
    uint64_t key = decode_sample_key(rip, want), te, ee;
    uint64_t e = decode_sample_lookup(key, &te, &ee);
    if (!e) {
        uint64_t target, end;
        e = decode_sweep_sampled(rip, func_start, func_end, img, want, key, &target, &end);
        te = decode_target_entry(key, rip, target);
        ee = decode_end_entry(key, rip, end);
        /* The target and end first: a reader that finds the region finds
         * them too (or, evicted, sweeps again). Only a region drawn from
         * needs them. */
        if (decode_state_of(e) == DECODE_FOUND) {
            decode_cache_put(decode_target_cache, te);
            decode_cache_put(decode_end_cache, ee);
        }
        decode_cache_put(decode_sample_cache, e);
    }
    return decode_sample_from_entry(rip, e, te, ee, want, draw, uc, out);
}

/* ---- trap fallback: no known boundary ------------------------------- */

/* Whether [addr, addr+len) is mapped: mincore fails with ENOMEM otherwise.
 * A system call, but signal-safe, and only needed at a page start. */
static int decode_mapped(uint64_t addr)
{
    unsigned char vec;
    int saved = errno;
    int ok = mincore((void *)(uintptr_t)(addr & ~(uint64_t)(DECODE_PAGE - 1)), 1, &vec) == 0;
    errno = saved;
    return ok;
}

enum drop_reason decode_access_ending_at(uint64_t rip, const ucontext_t *uc, uint64_t lo, uint64_t hi,
                                         mem_access *out)
{
    if (!decode_is_ready())
        return DROP_DECODE_FAILED;
    size_t in_page = (size_t)(rip & (DECODE_PAGE - 1));
    size_t max = DECODE_MAX_LEN;
    if (in_page < DECODE_MAX_LEN && !decode_mapped(rip - DECODE_MAX_LEN))
        max = in_page;
    /* Longest first: a suffix of the real instruction often decodes too
     * (without its REX prefix, say) but with the wrong width. */
    for (size_t k = max; k >= 1; k--) {
        decode_insn d;
        mem_access a;
        if (!ZYAN_SUCCESS(decode_full((const void *)(uintptr_t)(rip - k), k, &d)) || d.in.length != k)
            continue;
        if (decode_live(&d, rip - k, uc, 1, &a) == DROP_NONE && a.addr < hi && lo < a.addr + a.size) {
            *out = a;
            return DROP_NONE;
        }
    }
    return DROP_NO_BOUNDARY;
}

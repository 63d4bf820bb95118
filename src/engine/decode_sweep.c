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

#include "decode_internal.h"
#include "fpness.h"

/* Cache: one atomic word per rip. Bits 0..46 rip (user space), 47 "ahead",
 * 48..55 distance back to the start of the instruction ending at rip (or,
 * in the sample cache, to the access the sample stands for; forward when
 * ahead is set), 56..59 the state (enum decode_state), 60..63 key flags.
 * 0 means empty (rip is never 0). */
#define DECODE_CACHE_BITS 16
#define DECODE_CACHE_SLOTS (1u << DECODE_CACHE_BITS)
#define DECODE_CACHE_PROBES 32u
#define DECODE_RIP_MASK ((1ull << 47) - 1)
#define DECODE_F_AHEAD (1ull << 47)
#define DECODE_OFF_SHIFT 48
#define DECODE_OFF_MASK 0xFFull          /* sampled lookups look back up to 255 bytes */
#define DECODE_STATE_SHIFT 56
#define DECODE_STATE_MASK 0xFull
#define DECODE_S(state) ((uint64_t)(state) << DECODE_STATE_SHIFT)
#define DECODE_F_WANT_LOAD (1ull << 60)    /* these three are part of the key in the sample cache */
#define DECODE_F_SKIP_RSP (1ull << 61)
#define DECODE_F_SKIP_RIP (1ull << 62)
#define DECODE_F_SKIP_R15 (1ull << 63)
#define DECODE_KEY_MASK (DECODE_RIP_MASK | DECODE_F_WANT_LOAD | DECODE_F_SKIP_RSP | DECODE_F_SKIP_RIP | \
                         DECODE_F_SKIP_R15)
#define DECODE_LOOKBACK_INSNS 32u

/* What an entry says. A found access carries the element type of the value
 * it moves (fpness.c), decided once with the code around it in view. */
enum decode_state {
    DECODE_FOUND = 0,      /* an access; its value is not FP */
    DECODE_FOUND_F32,
    DECODE_FOUND_F64,
    DECODE_TARGET,         /* rip is a branch target */
    DECODE_NOBOUND,        /* no instruction ends at rip */
    DECODE_FAILED,         /* bytes before rip do not decode */
    DECODE_NONE_FOUND,     /* no access of the wanted kind */
};

static unsigned decode_state_of(uint64_t e)
{
    return (unsigned)((e >> DECODE_STATE_SHIFT) & DECODE_STATE_MASK);
}

static uint64_t decode_cache[DECODE_CACHE_SLOTS];        /* trap: instruction ending at rip */
static uint64_t decode_sample_cache[DECODE_CACHE_SLOTS]; /* sample: access it stands for */

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

/* The entry for key, or 0 on a miss. */
static uint64_t decode_cache_lookup(uint64_t *table, uint64_t key)
{
    uint64_t e = decode_cache_get(table, key);
    return (e & DECODE_KEY_MASK) == key ? e : 0;
}

/* Lock-free insert: claim an empty slot with CAS; give up quietly when the
 * neighbourhood is full (the answer is just recomputed next time). */
static void decode_cache_put(uint64_t *table, uint64_t e)
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
static uint64_t decode_branch_target(const ZydisDecodedInstruction *in, uint64_t next)
{
    if (!in->raw.imm[0].is_relative)
        return 0;
    return next + (uint64_t)in->raw.imm[0].value.s;
}

/* Linear sweep of the function: x86 only decodes forwards, and the function
 * start is the one boundary we trust. Returns a cache entry for rip. */
static uint64_t decode_sweep(uint64_t rip, uint64_t start, uint64_t end)
{
    uint64_t limit = end - start > DECODE_SWEEP_MAX ? start + DECODE_SWEEP_MAX : end;
    uint64_t pc = start, off = 0, state = DECODE_FOUND;
    while (pc < limit) {
        ZydisDecodedInstruction in;
        ZydisDecoderContext ctx;
        size_t avail = end - pc < DECODE_MAX_LEN ? (size_t)(end - pc) : DECODE_MAX_LEN;
        if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&decode_decoder, &ctx,
                                                        (const void *)(uintptr_t)pc, avail, &in))) {
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

/* The element type a found entry of the sample cache gives its access. */
static uint8_t decode_entry_fp(uint64_t e)
{
    unsigned s = decode_state_of(e);
    return s == DECODE_FOUND_F32 ? ACCESS_F32 : s == DECODE_FOUND_F64 ? ACCESS_F64 : ACCESS_INT;
}

static enum drop_reason decode_from_entry(uint64_t rip, uint64_t e, int exact, const ucontext_t *uc,
                                          mem_access *out)
{
    enum drop_reason r = decode_entry_reason(e);
    if (r != DROP_NONE)
        return r;
    size_t off = (size_t)((e >> DECODE_OFF_SHIFT) & DECODE_OFF_MASK);
    decode_insn d;
    if (e & DECODE_F_AHEAD) {
        /* The access the thread is about to run: its registers are live. */
        if (!ZYAN_SUCCESS(decode_read_at(rip + off, &d)))
            return DROP_DECODE_FAILED;
        r = decode_live(&d, rip + off, uc, 0, out);
        out->ahead = 1;
        out->fp = decode_entry_fp(e);
        return r;
    }
    uint64_t pc = rip - off;
    /* At most off bytes: never read past rip. */
    if (!ZYAN_SUCCESS(decode_full((const void *)(uintptr_t)pc, off < DECODE_MAX_LEN ? off : DECODE_MAX_LEN, &d)))
        return DROP_DECODE_FAILED;
    if (exact && d.in.length != off)
        return DROP_DECODE_FAILED;  /* the code changed since it was cached */
    r = decode_live(&d, pc, uc, 1, out);
    if (!exact)
        out->fp = decode_entry_fp(e);   /* a sample: the value's type as the sweep found it */
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
    *reason = decode_from_entry(rip, e, 1, uc, out);
    return 1;
}

enum drop_reason decode_access_before(uint64_t rip, uint64_t func_start, uint64_t func_end,
                                      const ucontext_t *uc, mem_access *out)
{
    if (!decode_is_ready())
        return DROP_DECODE_FAILED;
    /* rip == func_end is tolerated: the last instruction may be the access. */
    if (rip <= func_start || rip > func_end || (rip & ~DECODE_RIP_MASK))
        return DROP_NO_BOUNDARY;
    uint64_t e = decode_cache_lookup(decode_cache, rip);
    if (!e) {
        e = decode_sweep(rip, func_start, func_end);
        decode_cache_put(decode_cache, e);
    }
    return decode_from_entry(rip, e, 1, uc, out);
}

/* ---- sampled access: look back along straight-line code --------------- */

/* Control leaves here and does not fall through to the next instruction
 * (or a callee clobbers registers): straight-line code ends. Conditional
 * branches are fine: reaching rip past one means it fell through. */
static int decode_is_barrier(const ZydisDecodedInstruction *in)
{
    switch (in->meta.category) {
    case ZYDIS_CATEGORY_CALL:
    case ZYDIS_CATEGORY_RET:
    case ZYDIS_CATEGORY_UNCOND_BR:
    case ZYDIS_CATEGORY_SYSCALL:
    case ZYDIS_CATEGORY_INTERRUPT:
        return 1;
    default:
        return 0;
    }
}

static uint32_t decode_reg_bit(ZydisRegister r)
{
    int g = decode_greg(r);
    return g < 0 ? 0 : 1u << g;
}

/* GPRs the instruction writes, explicitly or implicitly (push writes rsp). */
static uint32_t decode_written(const decode_insn *d)
{
    uint32_t w = 0;
    for (unsigned i = 0; i < d->in.operand_count; i++) {
        const ZydisDecodedOperand *o = &d->ops[i];
        if (o->type == ZYDIS_OPERAND_TYPE_REGISTER && (o->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
            w |= decode_reg_bit(o->reg.value);
    }
    return w;
}

static int decode_kind_matches(const ZydisDecodedOperand *m, uint8_t want)
{
    int load = (m->actions & ZYDIS_OPERAND_ACTION_MASK_READ) != 0;
    int store = (m->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) != 0;
    return (want & ACCESS_RMW) == ACCESS_LOAD ? load && !store : store;
}

static int decode_skipped(const ZydisDecodedOperand *m, uint8_t want)
{
    return ((want & ACCESS_SKIP_RSP) && decode_widest(m->mem.base) == ZYDIS_REGISTER_RSP) ||
           ((want & ACCESS_SKIP_RIP) && decode_is_rip(m->mem.base)) ||
           ((want & ACCESS_SKIP_R15) && decode_widest(m->mem.base) == ZYDIS_REGISTER_R15);
}

/* Whether candidate c, given the registers written after it (written),
 * is an access of the wanted kind whose address the live registers at rip
 * still give. */
static int decode_candidate(const decode_insn *d, uint8_t want, uint32_t written)
{
    const ZydisDecodedOperand *m = NULL;
    if (decode_mem_operand(d, &m) != DROP_NONE || !decode_kind_matches(m, want) || decode_skipped(m, want))
        return 0;
    uint32_t uses = decode_reg_bit(m->mem.index);
    if (!decode_is_rip(m->mem.base) && m->mem.base != ZYDIS_REGISTER_NONE) {
        if (decode_greg(m->mem.base) < 0)
            return 0;
        uses |= decode_reg_bit(m->mem.base);
    }
    return (uses & written) == 0;
}

/* Picks, among the instructions of the straight-line run that ends at rip,
 * the nearest access of the wanted kind whose address is recoverable. */
static uint64_t decode_pick_back(uint64_t rip, const uint64_t *ring, unsigned n, uint64_t block,
                                 uint8_t want, uint64_t key)
{
    uint32_t written = 0;
    for (unsigned k = 0; k < n && k < DECODE_LOOKBACK_INSNS; k++) {
        uint64_t c = ring[(n - 1 - k) % DECODE_LOOKBACK_INSNS];
        if (c < block || rip - c > DECODE_OFF_MASK)
            break;
        decode_insn d;
        size_t len = rip - c < DECODE_MAX_LEN ? (size_t)(rip - c) : DECODE_MAX_LEN;
        if (!ZYAN_SUCCESS(decode_full((const void *)(uintptr_t)c, len, &d)))
            break;
        written |= decode_written(&d);
        if (decode_candidate(&d, want, written))
            return key | ((rip - c) << DECODE_OFF_SHIFT);
    }
    return key | DECODE_S(DECODE_NONE_FOUND);
}

/* No access behind rip: the next one ahead, in the straight-line code from
 * rip up to the first branch, whose base and index registers nothing before
 * it changes — the address it will use is in the registers now. It has not
 * run, so its watch absorbs its own first trap (primed). Doubles the samples
 * that find an access in loops whose one store sits after the loop head. */
static uint64_t decode_pick_ahead(uint64_t rip, uint64_t end, uint8_t want, uint64_t key)
{
    uint32_t written = 0;
    uint64_t pc = rip;
    for (unsigned k = 0; k < DECODE_LOOKBACK_INSNS && pc < end && pc - rip <= DECODE_OFF_MASK; k++) {
        decode_insn d;
        size_t avail = end - pc < DECODE_MAX_LEN ? (size_t)(end - pc) : DECODE_MAX_LEN;
        if (!ZYAN_SUCCESS(decode_full((const void *)(uintptr_t)pc, avail, &d)))
            break;
        if (decode_candidate(&d, want, written))
            return key | DECODE_F_AHEAD | ((pc - rip) << DECODE_OFF_SHIFT);
        if (decode_is_barrier(&d.in) || d.in.meta.category == ZYDIS_CATEGORY_COND_BR)
            break;
        written |= decode_written(&d);
        pc += d.in.length;
    }
    return 0;
}

/* A found entry gets the element type of the value its access moves: what
 * made a stored register is looked for among the instructions of the run
 * that ran before the access (from the ring, and for an access ahead the
 * ones between rip and it), what uses a loaded one after it (fpness.c). */
static uint64_t decode_with_fpness(uint64_t e, uint64_t rip, const uint64_t *ring, unsigned n, uint64_t block)
{
    if (decode_state_of(e) != DECODE_FOUND)
        return e;
    uint64_t off = (e >> DECODE_OFF_SHIFT) & DECODE_OFF_MASK;
    uint64_t pc = e & DECODE_F_AHEAD ? rip + off : rip - off;
    uint64_t run[2 * DECODE_LOOKBACK_INSNS];
    unsigned k = 0;
    decode_insn d;
    for (unsigned i = n > DECODE_LOOKBACK_INSNS ? n - DECODE_LOOKBACK_INSNS : 0; i < n; i++) {
        uint64_t c = ring[i % DECODE_LOOKBACK_INSNS];
        if (c >= block && c < pc)
            run[k++] = c;
    }
    for (uint64_t c = rip; c < pc && k < 2 * DECODE_LOOKBACK_INSNS; c += d.in.length) {
        if (!ZYAN_SUCCESS(decode_read_at(c, &d)))
            return e;
        run[k++] = c;
    }
    if (!ZYAN_SUCCESS(decode_read_at(pc, &d)))
        return e;
    uint8_t fp = fpness_of(&d, pc, run, k);
    return e | DECODE_S(fp == ACCESS_F32 ? DECODE_FOUND_F32 : fp == ACCESS_F64 ? DECODE_FOUND_F64 : DECODE_FOUND);
}

/* Sweeps the whole function once: instruction starts just before rip, the
 * start of rip's straight-line run (after the last barrier, or at the last
 * direct branch target at or before rip), then picks the access. */
static uint64_t decode_sweep_sampled(uint64_t rip, uint64_t start, uint64_t end, uint8_t want, uint64_t key)
{
    uint64_t limit = end - start > DECODE_SWEEP_MAX ? start + DECODE_SWEEP_MAX : end;
    uint64_t ring[DECODE_LOOKBACK_INSNS];
    uint64_t pc = start, block = start;
    unsigned n = 0;
    int boundary = 0;
    while (pc < limit) {
        ZydisDecodedInstruction in;
        ZydisDecoderContext ctx;
        size_t avail = end - pc < DECODE_MAX_LEN ? (size_t)(end - pc) : DECODE_MAX_LEN;
        if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&decode_decoder, &ctx,
                                                        (const void *)(uintptr_t)pc, avail, &in))) {
            if (pc >= rip)
                break;
            return key | DECODE_S(DECODE_FAILED);
        }
        uint64_t next = pc + in.length;
        if (pc < rip) {
            if (next > rip)
                return key | DECODE_S(DECODE_NOBOUND);
            ring[n++ % DECODE_LOOKBACK_INSNS] = pc;
            boundary |= next == rip;
            if (decode_is_barrier(&in) && next > block)
                block = next;
        }
        uint64_t target = decode_branch_target(&in, next);
        if (target && target <= rip && target > block)
            block = target;
        pc = next;
    }
    if (!boundary)
        return key | DECODE_S(DECODE_NOBOUND);
    /* At a branch target what ran before rip is not the code before it. */
    uint64_t e = block == rip ? key | DECODE_S(DECODE_TARGET) : decode_pick_back(rip, ring, n, block, want, key);
    unsigned s = decode_state_of(e);
    if (s == DECODE_TARGET || s == DECODE_NONE_FOUND) {
        uint64_t ahead = decode_pick_ahead(rip, end, want, key);
        if (ahead)
            e = ahead;
    }
    return decode_with_fpness(e, rip, ring, n, block);
}

static uint64_t decode_sample_key(uint64_t rip, uint8_t want)
{
    return rip | ((want & ACCESS_RMW) == ACCESS_LOAD ? DECODE_F_WANT_LOAD : 0) |
           (want & ACCESS_SKIP_RSP ? DECODE_F_SKIP_RSP : 0) | (want & ACCESS_SKIP_RIP ? DECODE_F_SKIP_RIP : 0) |
           (want & ACCESS_SKIP_R15 ? DECODE_F_SKIP_R15 : 0);
}

int decode_access_sampled_cached(uint64_t rip, uint8_t want, const ucontext_t *uc, mem_access *out,
                                 enum drop_reason *reason)
{
    if (!decode_is_ready() || (rip & ~DECODE_RIP_MASK))
        return 0;
    uint64_t key = decode_sample_key(rip, want);
    uint64_t e = decode_cache_lookup(decode_sample_cache, key);
    if (!e)
        return 0;
    *reason = decode_from_entry(rip, e, 0, uc, out);
    return 1;
}

enum drop_reason decode_access_sampled(uint64_t rip, uint64_t func_start, uint64_t func_end, uint8_t want,
                                       const ucontext_t *uc, mem_access *out)
{
    if (!decode_is_ready())
        return DROP_DECODE_FAILED;
    if (rip <= func_start || rip > func_end || (rip & ~DECODE_RIP_MASK))
        return DROP_NO_BOUNDARY;
    uint64_t key = decode_sample_key(rip, want);
    uint64_t e = decode_cache_lookup(decode_sample_cache, key);
    if (!e) {
        e = decode_sweep_sampled(rip, func_start, func_end, want, key);
        decode_cache_put(decode_sample_cache, e);
    }
    return decode_from_entry(rip, e, 0, uc, out);
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

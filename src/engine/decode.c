/*
 * decode.c - owns "which memory access did this instruction make": Zydis
 * decoding, effective-address arithmetic against a register context, and the
 * per-rip cache of where the previous instruction starts.
 *
 * Everything except decode_init and decode_format runs in signal context
 * (timer samples, data-breakpoint traps): no malloc, no locks, no stdio, errno
 * left as found. Zydis decoding is pure (no allocation, no global state), so it
 * is safe to call from a handler once the decoder object is initialised.
 */
#include "decode.h"

#include <Zydis/Zydis.h>
#include <asm/prctl.h>
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DECODE_MAX_LEN 15u           /* architectural x86 instruction limit */
#define DECODE_SWEEP_MAX (64u * 1024u) /* bound on work per uncached sample */
#define DECODE_PAGE 4096u            /* smallest x86-64 page: a safe read bound */

/* Cache: one atomic word per rip. Bits 0..47 rip, 48..51 length of the
 * instruction ending at rip, then flags. 0 means empty (rip is never 0). */
#define DECODE_CACHE_BITS 16
#define DECODE_CACHE_SLOTS (1u << DECODE_CACHE_BITS)
#define DECODE_CACHE_PROBES 32u
#define DECODE_RIP_MASK ((1ull << 48) - 1)
#define DECODE_OFF_SHIFT 48
#define DECODE_F_TARGET (1ull << 52)
#define DECODE_F_NOBOUND (1ull << 53)
#define DECODE_F_FAILED (1ull << 54)

typedef struct decode_insn {
    ZydisDecodedInstruction in;
    ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
} decode_insn;

static ZydisDecoder decode_decoder;
static ZydisFormatter decode_fmt_att, decode_fmt_intel;
static int decode_ready;
static uint64_t decode_cache[DECODE_CACHE_SLOTS];

static int decode_fmt_setup(ZydisFormatter *f, ZydisFormatterStyle style)
{
    if (!ZYAN_SUCCESS(ZydisFormatterInit(f, style)))
        return -1;
    /* "jmp 0x401000" reads better than a 16-digit zero-padded address. */
    ZydisFormatterSetProperty(f, ZYDIS_FORMATTER_PROP_ADDR_PADDING_ABSOLUTE, ZYDIS_PADDING_DISABLED);
    ZydisFormatterSetProperty(f, ZYDIS_FORMATTER_PROP_ADDR_PADDING_RELATIVE, ZYDIS_PADDING_DISABLED);
    /* Lowercase hex, as objdump and perf print it. */
    ZydisFormatterSetProperty(f, ZYDIS_FORMATTER_PROP_HEX_UPPERCASE, ZYAN_FALSE);
    return 0;
}

int decode_init(void)
{
    if (__atomic_load_n(&decode_ready, __ATOMIC_ACQUIRE))
        return 0;
    if (!ZYAN_SUCCESS(ZydisDecoderInit(&decode_decoder, ZYDIS_MACHINE_MODE_LONG_64,
                                       ZYDIS_STACK_WIDTH_64)))
        return -1;
    if (decode_fmt_setup(&decode_fmt_att, ZYDIS_FORMATTER_STYLE_ATT) != 0 ||
        decode_fmt_setup(&decode_fmt_intel, ZYDIS_FORMATTER_STYLE_INTEL) != 0)
        return -1;
    __atomic_store_n(&decode_ready, 1, __ATOMIC_RELEASE);
    return 0;
}

static int decode_is_ready(void)
{
    return __atomic_load_n(&decode_ready, __ATOMIC_ACQUIRE);
}

static ZyanStatus decode_full(const void *code, size_t len, decode_insn *d)
{
    return ZydisDecoderDecodeFull(&decode_decoder, code, len, &d->in, d->ops);
}

/* ---- operand analysis ------------------------------------------------- */

static ZydisRegister decode_widest(ZydisRegister r)
{
    return r == ZYDIS_REGISTER_NONE ? r
                                    : ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
}

/* ucontext greg index of a GPR (any width), -1 if it is not a GPR. */
static int decode_greg(ZydisRegister r)
{
    switch (decode_widest(r)) {
    case ZYDIS_REGISTER_RAX: return REG_RAX;
    case ZYDIS_REGISTER_RBX: return REG_RBX;
    case ZYDIS_REGISTER_RCX: return REG_RCX;
    case ZYDIS_REGISTER_RDX: return REG_RDX;
    case ZYDIS_REGISTER_RSI: return REG_RSI;
    case ZYDIS_REGISTER_RDI: return REG_RDI;
    case ZYDIS_REGISTER_RBP: return REG_RBP;
    case ZYDIS_REGISTER_RSP: return REG_RSP;
    case ZYDIS_REGISTER_R8: return REG_R8;
    case ZYDIS_REGISTER_R9: return REG_R9;
    case ZYDIS_REGISTER_R10: return REG_R10;
    case ZYDIS_REGISTER_R11: return REG_R11;
    case ZYDIS_REGISTER_R12: return REG_R12;
    case ZYDIS_REGISTER_R13: return REG_R13;
    case ZYDIS_REGISTER_R14: return REG_R14;
    case ZYDIS_REGISTER_R15: return REG_R15;
    default: return -1;
    }
}

/* Instructions whose memory operand names a line or a hint, not data the
 * program reads or writes. */
static int decode_is_hint(const ZydisDecodedInstruction *in)
{
    switch (in->meta.category) {
    case ZYDIS_CATEGORY_NOP:
    case ZYDIS_CATEGORY_WIDENOP:
    case ZYDIS_CATEGORY_PREFETCH:
    case ZYDIS_CATEGORY_PREFETCHWT1:
        return 1;
    default:
        break;
    }
    switch (in->mnemonic) {
    case ZYDIS_MNEMONIC_CLFLUSH:
    case ZYDIS_MNEMONIC_CLFLUSHOPT:
    case ZYDIS_MNEMONIC_CLWB:
    case ZYDIS_MNEMONIC_CLDEMOTE:
        return 1;
    default:
        return 0;
    }
}

/* First explicit operand that really touches memory. LEA and friends (AGEN,
 * MIB) only compute an address; VSIB needs vector registers we don't have. */
static enum drop_reason decode_mem_operand(const decode_insn *d, const ZydisDecodedOperand **op)
{
    if (decode_is_hint(&d->in))
        return DROP_NOT_MEMORY;
    for (unsigned i = 0; i < d->in.operand_count; i++) {
        const ZydisDecodedOperand *o = &d->ops[i];
        if (o->visibility != ZYDIS_OPERAND_VISIBILITY_EXPLICIT || o->type != ZYDIS_OPERAND_TYPE_MEMORY)
            continue;
        if (o->mem.type == ZYDIS_MEMOP_TYPE_VSIB)
            return DROP_ADDR_UNKNOWN;
        if (o->mem.type == ZYDIS_MEMOP_TYPE_MEM) {
            *op = o;
            return DROP_NONE;
        }
    }
    return DROP_NOT_MEMORY;
}

static int decode_is_rip(ZydisRegister r)
{
    return r == ZYDIS_REGISTER_RIP || r == ZYDIS_REGISTER_EIP;
}

/* With post-access registers the address is only recoverable if the
 * instruction left its base and index registers alone (e.g. not
 * "mov (%rax),%rax", not "push 8(%rsp)"). */
static int decode_clobbers(const decode_insn *d, const ZydisDecodedOperand *m)
{
    ZydisRegister base = decode_is_rip(m->mem.base) ? ZYDIS_REGISTER_NONE : decode_widest(m->mem.base);
    ZydisRegister index = decode_widest(m->mem.index);
    for (unsigned i = 0; i < d->in.operand_count; i++) {
        const ZydisDecodedOperand *o = &d->ops[i];
        if (o->type != ZYDIS_OPERAND_TYPE_REGISTER || !(o->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
            continue;
        ZydisRegister w = decode_widest(o->reg.value);
        if (w != ZYDIS_REGISTER_NONE && (w == base || w == index))
            return 1;
    }
    return 0;
}

/* base + index*scale + disp, without the segment base. */
static enum drop_reason decode_ea(const decode_insn *d, const ZydisDecodedOperand *m, uint64_t pc,
                                  const greg_t *regs, uint64_t *ea)
{
    uint64_t a = (uint64_t)m->mem.disp.value;
    if (decode_is_rip(m->mem.base)) {
        a += pc + d->in.length; /* RIP-relative is relative to the next insn */
    } else if (m->mem.base != ZYDIS_REGISTER_NONE) {
        int g = decode_greg(m->mem.base);
        if (g < 0)
            return DROP_ADDR_UNKNOWN;
        a += (uint64_t)regs[g];
    }
    if (m->mem.index != ZYDIS_REGISTER_NONE) {
        int g = decode_greg(m->mem.index);
        if (g < 0)
            return DROP_ADDR_UNKNOWN;
        a += (uint64_t)regs[g] * (m->mem.scale ? m->mem.scale : 1);
    }
    if (d->in.address_width == 32)
        a = (uint32_t)a; /* 0x67 prefix: the CPU wraps the sum at 32 bits */
    *ea = a;
    return DROP_NONE;
}

static uint8_t decode_fp(const ZydisDecodedOperand *m)
{
    if (m->element_type == ZYDIS_ELEMENT_TYPE_FLOAT32)
        return ACCESS_F32;
    if (m->element_type == ZYDIS_ELEMENT_TYPE_FLOAT64)
        return ACCESS_F64;
    return ACCESS_INT;
}

/* The pure core: fills *out with the address before any segment base and
 * reports the segment so callers can add FS/GS base however they know it. */
static enum drop_reason decode_compute(const decode_insn *d, uint64_t pc, const greg_t *regs,
                                       int post_state, mem_access *out, ZydisRegister *seg)
{
    const ZydisDecodedOperand *m = NULL;
    enum drop_reason r = decode_mem_operand(d, &m);
    if (r != DROP_NONE)
        return r;
    uint8_t kind = 0;
    if (m->actions & ZYDIS_OPERAND_ACTION_MASK_READ)
        kind |= ACCESS_LOAD;
    if (m->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)
        kind |= ACCESS_STORE;
    uint32_t size = (m->size + 7u) / 8u;
    /* fxsave/xsave-style blocks are not data accesses mem_access can describe. */
    if (!kind || size == 0 || size > 64)
        return DROP_NOT_MEMORY;
    if (post_state && decode_clobbers(d, m))
        return DROP_ADDR_CLOBBERED;
    uint64_t ea;
    r = decode_ea(d, m, pc, regs, &ea);
    if (r != DROP_NONE)
        return r;
    *out = (mem_access){ .pc = pc, .addr = ea, .size = size, .insn_len = d->in.length,
                         .kind = kind, .fp = decode_fp(m) };
    *seg = m->mem.segment;
    return DROP_NONE;
}

enum drop_reason decode_access_bytes(const uint8_t *code, size_t len, uint64_t pc,
                                     const greg_t *regs, uint64_t fs_base, uint64_t gs_base,
                                     int post_state, mem_access *out)
{
    decode_insn d;
    ZydisRegister seg = ZYDIS_REGISTER_NONE;
    if (!decode_is_ready() || !ZYAN_SUCCESS(decode_full(code, len, &d)))
        return DROP_DECODE_FAILED;
    enum drop_reason r = decode_compute(&d, pc, regs, post_state, out, &seg);
    if (r == DROP_NONE && seg == ZYDIS_REGISTER_FS)
        out->addr += fs_base;
    else if (r == DROP_NONE && seg == ZYDIS_REGISTER_GS)
        out->addr += gs_base;
    return r;
}

/* ---- live register context -------------------------------------------- */

/* A handler runs on the interrupted thread and the kernel does not switch FS
 * for signal delivery, so our thread pointer is the interrupted FS base
 * (glibc keeps FS base == TCB address). */
static uint64_t decode_fs_base(void)
{
    return (uint64_t)(uintptr_t)__builtin_thread_pointer();
}

/* GS is rarely used in user space; ask the kernel only when needed. */
static uint64_t decode_gs_base(void)
{
    int saved = errno;
    unsigned long v = 0;
    if (syscall(SYS_arch_prctl, ARCH_GET_GS, &v) != 0)
        v = 0;
    errno = saved;
    return v;
}

static enum drop_reason decode_live(const decode_insn *d, uint64_t pc, const ucontext_t *uc,
                                    int post_state, mem_access *out)
{
    ZydisRegister seg = ZYDIS_REGISTER_NONE;
    enum drop_reason r = decode_compute(d, pc, (const greg_t *)uc->uc_mcontext.gregs, post_state,
                                        out, &seg);
    if (r == DROP_NONE && seg == ZYDIS_REGISTER_FS)
        out->addr += decode_fs_base();
    else if (r == DROP_NONE && seg == ZYDIS_REGISTER_GS)
        out->addr += decode_gs_base();
    return r;
}

/* Decode at an address with no known end. Stay inside pc's page first: the
 * next page may be unmapped. Only an instruction that really crosses the
 * boundary makes us read further (code pages are normally contiguous). Zydis
 * 4.0 reads bytes lazily, but we don't want to depend on that. */
static ZyanStatus decode_read_at(uint64_t pc, decode_insn *d)
{
    size_t in_page = DECODE_PAGE - (size_t)(pc & (DECODE_PAGE - 1));
    size_t len = in_page < DECODE_MAX_LEN ? in_page : DECODE_MAX_LEN;
    const void *code = (const void *)(uintptr_t)pc;
    ZyanStatus s = decode_full(code, len, d);
    if (s == ZYDIS_STATUS_NO_MORE_DATA && len < DECODE_MAX_LEN)
        s = decode_full(code, DECODE_MAX_LEN, d);
    return s;
}

enum drop_reason decode_access_at(uint64_t rip, const ucontext_t *uc, mem_access *out)
{
    decode_insn d;
    if (!decode_is_ready() || !ZYAN_SUCCESS(decode_read_at(rip, &d)))
        return DROP_DECODE_FAILED;
    return decode_live(&d, rip, uc, 0, out);
}

/* ---- previous-instruction cache --------------------------------------- */

static size_t decode_hash(uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - DECODE_CACHE_BITS));
}

static uint64_t decode_cache_get(uint64_t key)
{
    size_t h = decode_hash(key);
    for (unsigned i = 0; i < DECODE_CACHE_PROBES; i++) {
        uint64_t e = __atomic_load_n(&decode_cache[(h + i) & (DECODE_CACHE_SLOTS - 1)], __ATOMIC_ACQUIRE);
        if (e == 0 || (e & DECODE_RIP_MASK) == key)
            return e;
    }
    return 0;
}

/* Lock-free insert: claim an empty slot with CAS; give up quietly when the
 * neighbourhood is full (the answer is just recomputed next time). */
static void decode_cache_put(uint64_t e)
{
    uint64_t key = e & DECODE_RIP_MASK;
    size_t h = decode_hash(key);
    for (unsigned i = 0; i < DECODE_CACHE_PROBES; i++) {
        uint64_t cur = 0;
        uint64_t *slot = &decode_cache[(h + i) & (DECODE_CACHE_SLOTS - 1)];
        if (__atomic_compare_exchange_n(slot, &cur, e, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return;
        if ((cur & DECODE_RIP_MASK) == key)
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
    uint64_t pc = start, off = 0, flags = 0;
    while (pc < limit) {
        ZydisDecodedInstruction in;
        ZydisDecoderContext ctx;
        size_t avail = end - pc < DECODE_MAX_LEN ? (size_t)(end - pc) : DECODE_MAX_LEN;
        if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&decode_decoder, &ctx,
                                                        (const void *)(uintptr_t)pc, avail, &in))) {
            if (pc >= rip)
                break; /* data or padding after rip: the answer is already known */
            return rip | DECODE_F_FAILED;
        }
        uint64_t next = pc + in.length;
        if (next == rip)
            off = in.length;
        else if (pc < rip && next > rip)
            return rip | DECODE_F_NOBOUND; /* rip is inside an instruction */
        if (decode_branch_target(&in, next) == rip)
            flags |= DECODE_F_TARGET;
        pc = next;
    }
    if (off == 0)
        return rip | DECODE_F_NOBOUND; /* beyond the sweep limit */
    return rip | (off << DECODE_OFF_SHIFT) | flags;
}

static enum drop_reason decode_entry_reason(uint64_t e)
{
    if (e & DECODE_F_FAILED)
        return DROP_DECODE_FAILED;
    if (e & DECODE_F_NOBOUND)
        return DROP_NO_BOUNDARY;
    if (e & DECODE_F_TARGET)
        return DROP_BRANCH_TARGET;
    return DROP_NONE;
}

enum drop_reason decode_access_before(uint64_t rip, uint64_t func_start, uint64_t func_end,
                                      const ucontext_t *uc, mem_access *out)
{
    if (!decode_is_ready())
        return DROP_DECODE_FAILED;
    /* rip == func_end is tolerated: the last instruction may be the access. */
    if (rip <= func_start || rip > func_end || (rip & ~DECODE_RIP_MASK))
        return DROP_NO_BOUNDARY;
    uint64_t e = decode_cache_get(rip);
    if (e == 0) {
        e = decode_sweep(rip, func_start, func_end);
        decode_cache_put(e);
    }
    enum drop_reason r = decode_entry_reason(e);
    if (r != DROP_NONE)
        return r;
    size_t off = (size_t)((e >> DECODE_OFF_SHIFT) & 0xF);
    uint64_t pc = rip - off;
    decode_insn d;
    /* Exactly off bytes: never read past rip, and notice if the code changed. */
    if (!ZYAN_SUCCESS(decode_full((const void *)(uintptr_t)pc, off, &d)) || d.in.length != off)
        return DROP_DECODE_FAILED;
    return decode_live(&d, pc, uc, 1, out);
}

/* ---- text ------------------------------------------------------------- */

size_t decode_format(uint64_t pc, int intel_syntax, char *buf, size_t len)
{
    decode_insn d;
    if (!buf || len == 0)
        return 0;
    buf[0] = '\0';
    if (decode_init() != 0 || !ZYAN_SUCCESS(decode_read_at(pc, &d)))
        return 0;
    const ZydisFormatter *f = intel_syntax ? &decode_fmt_intel : &decode_fmt_att;
    if (!ZYAN_SUCCESS(ZydisFormatterFormatInstruction(f, &d.in, d.ops, d.in.operand_count_visible,
                                                      buf, len, pc, NULL))) {
        buf[0] = '\0';
        return 0;
    }
    return strlen(buf);
}

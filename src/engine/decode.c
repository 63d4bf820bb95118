/*
 * decode.c - owns "which memory access does this instruction make": Zydis
 * decoding and effective-address arithmetic against a register context.
 * Finding instruction boundaries is decode_sweep.c's job.
 *
 * Everything except decode_init and decode_format runs in signal context
 * (timer samples, data-breakpoint traps): no malloc, no locks, no stdio, errno
 * left as found. Zydis decoding is pure (no allocation, no global state), so it
 * is safe to call from a handler once the decoder object is initialised.
 */
#include "decode.h"
#include "decode_internal.h"
#include "memread.h"
#include "fpness.h"
#include "code_image.h"

#include <Zydis/Zydis.h>
#include <asm/prctl.h>
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

ZydisDecoder decode_decoder;
static ZydisFormatter decode_fmt_att, decode_fmt_intel;
static int decode_ready;

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
    (void)code_image_init();   /* without it, sweeps decode every time */
    __atomic_store_n(&decode_ready, 1, __ATOMIC_RELEASE);
    return 0;
}

int decode_is_ready(void)
{
    return __atomic_load_n(&decode_ready, __ATOMIC_ACQUIRE);
}

ZyanStatus decode_full(const void *code, size_t len, decode_insn *d)
{
    return ZydisDecoderDecodeFull(&decode_decoder, code, len, &d->in, d->ops);
}

int decode_insn_within(uint64_t pc, uint64_t end, ZydisDecodedInstruction *in)
{
    ZydisDecoderContext ctx;
    size_t avail = end - pc < DECODE_MAX_LEN ? (size_t)(end - pc) : DECODE_MAX_LEN;
    return ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&decode_decoder, &ctx, (const void *)(uintptr_t)pc, avail, in));
}

/* ---- operand analysis ------------------------------------------------- */

ZydisRegister decode_widest(ZydisRegister r)
{
    return r == ZYDIS_REGISTER_NONE ? r
                                    : ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
}

/* ucontext greg index of a GPR (any width), -1 if it is not a GPR. */
int decode_greg(ZydisRegister r)
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

/* "lock add $0, (%rsp)" and "lock or $0, ...": a full fence (HotSpot's
 * volatile and G1 barriers), not data the program stores. */
static int decode_is_fence(const decode_insn *d)
{
    if (!(d->in.attributes & ZYDIS_ATTRIB_HAS_LOCK))
        return 0;
    if (d->in.mnemonic != ZYDIS_MNEMONIC_ADD && d->in.mnemonic != ZYDIS_MNEMONIC_OR)
        return 0;
    return d->in.raw.imm[0].size && d->in.raw.imm[0].value.u == 0;
}

int decode_is_string(const decode_insn *d)
{
    return d->in.meta.category == ZYDIS_CATEGORY_STRINGOP;
}

int decode_is_rep_string(const decode_insn *d)
{
    return decode_is_string(d) &&
           (d->in.attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE | ZYDIS_ATTRIB_HAS_REPNE));
}

/* String instructions (rep stos/movs: memset, memcpy) have hidden memory
 * operands: the store (movs, stos) when there is one, else the load. */
static enum drop_reason decode_string_operand(const decode_insn *d, const ZydisDecodedOperand **op)
{
    const ZydisDecodedOperand *load = NULL;
    for (unsigned i = 0; i < d->in.operand_count; i++) {
        const ZydisDecodedOperand *o = &d->ops[i];
        if (o->type != ZYDIS_OPERAND_TYPE_MEMORY)
            continue;
        if (o->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) {
            *op = o;
            return DROP_NONE;
        }
        if (!load)
            load = o;
    }
    *op = load;
    return load ? DROP_NONE : DROP_NOT_MEMORY;
}

/* First explicit operand that really touches memory. LEA and friends (AGEN,
 * MIB) only compute an address; VSIB needs vector registers we don't have. */
enum drop_reason decode_mem_operand(const decode_insn *d, const ZydisDecodedOperand **op)
{
    if (decode_is_hint(&d->in) || decode_is_fence(d))
        return DROP_NOT_MEMORY;
    if (decode_is_string(d))
        return decode_string_operand(d, op);
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

int decode_is_rip(ZydisRegister r)
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
    int string = decode_is_string(d);
    uint32_t element = size;
    int clobbered = post_state && !string && decode_clobbers(d, m);
    uint64_t ea = 0;
    r = clobbered ? DROP_NONE : decode_ea(d, m, pc, regs, &ea);
    if (r != DROP_NONE)
        return r;
    if (string) {
        /* rdi/rsi name the next element: before the instruction (or between
         * two iterations of a rep) that is the one about to be accessed;
         * after an iteration, the one just accessed is a step back. */
        int backward = (regs[REG_EFL] & 0x400) != 0;   /* EFLAGS.DF */
        if (!post_state && decode_is_rep_string(d) && regs[REG_RCX] == 0)
            return DROP_NOT_MEMORY;   /* a rep with nothing left to do */
        if (post_state)
            ea = backward ? ea + size : ea - size;
        else if (!backward && (d->in.attributes & ZYDIS_ATTRIB_HAS_REP) && (uint64_t)regs[REG_RCX] > 1)
            /* Ahead of a forward rep stos/movs: the next elements it will
             * fill, so the watch can be as wide as for any other store. */
            size = (uint64_t)regs[REG_RCX] >= 64 / size ? 64 : (uint32_t)regs[REG_RCX] * size;
    }
    *out = (mem_access){ .pc = pc, .addr = ea, .size = size, .insn_len = d->in.length,
                         .kind = kind, .fp = fpness_of_move(d, m),
                         .base_rsp = decode_widest(m->mem.base) == ZYDIS_REGISTER_RSP,
                         .rip_relative = decode_is_rip(m->mem.base),
                         .base_r15 = decode_widest(m->mem.base) == ZYDIS_REGISTER_R15,
                         .string = string, .element = string ? (uint8_t)element : 0,
                         .clobbered = (uint8_t)clobbered };
    *seg = m->mem.segment;
    return clobbered ? DROP_ADDR_CLOBBERED : DROP_NONE;
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

enum drop_reason decode_live(const decode_insn *d, uint64_t pc, const ucontext_t *uc,
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
ZyanStatus decode_read_at(uint64_t pc, decode_insn *d)
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
    enum drop_reason r = decode_live(&d, rip, uc, 0, out);
    /* No boundary behind rip is known, so a store's producer is out of
     * sight; a load's consumer ahead is not. */
    if (r == DROP_NONE)
        out->fp = fpness_of(&d, rip, NULL, 0);
    return r;
}

/* A data breakpoint hit inside a rep string instruction traps after that
 * iteration with the pc still AT the instruction (more iterations follow):
 * the access is the element it just finished, if that is in [lo, hi). */
enum drop_reason decode_string_in_progress(uint64_t rip, const ucontext_t *uc, uint64_t lo, uint64_t hi,
                                           mem_access *out)
{
    decode_insn d;
    mem_access a;
    if (!decode_is_ready() || !ZYAN_SUCCESS(decode_read_at(rip, &d)) || !decode_is_string(&d))
        return DROP_NO_BOUNDARY;
    enum drop_reason r = decode_live(&d, rip, uc, 1, &a);
    if (r != DROP_NONE)
        return r;
    if (!(a.addr < hi && lo < a.addr + a.size))
        return DROP_SPURIOUS_TRAP;
    *out = a;
    return DROP_NONE;
}

/* ---- text ------------------------------------------------------------- */

size_t decode_format_bytes(const uint8_t *code, size_t len, uint64_t pc, int intel_syntax,
                           char *buf, size_t buflen, size_t *insn_len)
{
    decode_insn d;
    *insn_len = 0;
    if (!buf || buflen == 0)
        return 0;
    buf[0] = '\0';
    if (decode_init() != 0 || !ZYAN_SUCCESS(decode_full(code, len, &d)))
        return 0;
    const ZydisFormatter *f = intel_syntax ? &decode_fmt_intel : &decode_fmt_att;
    if (!ZYAN_SUCCESS(ZydisFormatterFormatInstruction(f, &d.in, d.ops, d.in.operand_count_visible,
                                                      buf, buflen, pc, NULL))) {
        buf[0] = '\0';
        return 0;
    }
    *insn_len = d.in.length;
    return strlen(buf);
}

/* A profile is written after its samples: the code at a pc may be gone by
 * then (a library dlclosed since; tests/e2e dlopen_loop crashed at exit
 * reading it), so its bytes are copied with memread, which never faults.
 * Through this thread's id, not the process's: the guardian's writer runs
 * in a process whose leader has exited, and a read through an exited
 * task's id fails (every instruction the guardian wrote was blank). */
size_t decode_format(uint64_t pc, int intel_syntax, char *buf, size_t len)
{
    uint8_t code[DECODE_MAX_LEN];
    size_t n = DECODE_MAX_LEN, insn_len;
    pid_t self = gettid();
    if (buf && len)
        buf[0] = '\0';
    if (memread(self, pc, code, n) < 0) {
        n = DECODE_PAGE - (size_t)(pc & (DECODE_PAGE - 1));   /* the next page may be unmapped */
        if (n >= DECODE_MAX_LEN || memread(self, pc, code, n) < 0)
            return 0;
    }
    return decode_format_bytes(code, n, pc, intel_syntax, buf, len, &insn_len);
}

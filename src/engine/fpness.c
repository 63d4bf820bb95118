/*
 * fpness.c - owns "is the value this access moves floating point?": the
 * element type the detector compares watched values with (fpness.h says
 * why the move alone cannot tell).
 *
 * Runs in signal context (a timer sample): no malloc, no locks, no stdio.
 * It reads code only: instructions already known to start in the
 * straight-line run before the access, and forward from the access through
 * decode_read_at, which does not read past a page without need.
 */
#include "fpness.h"

#define FPNESS_MAX_INSNS 32u   /* the look-back's own bound (decode_sweep.c) */
#define FPNESS_COPY 0xFF       /* producer class: a register copy, look further back */

/* Moves compilers use for data of every type: gcc stores integer and double
 * vectors alike with movaps/movups (fewer bytes), loads and copies with
 * movdqa, moves through GPRs with movq/movd. Their element type says
 * nothing about the data. */
static int fpness_typeless_move(ZydisMnemonic mn)
{
    switch (mn) {
    case ZYDIS_MNEMONIC_MOVAPS: case ZYDIS_MNEMONIC_MOVUPS: case ZYDIS_MNEMONIC_MOVDQA:
    case ZYDIS_MNEMONIC_MOVDQU: case ZYDIS_MNEMONIC_MOVNTPS: case ZYDIS_MNEMONIC_MOVNTDQ:
    case ZYDIS_MNEMONIC_MOVNTDQA: case ZYDIS_MNEMONIC_MOVLPS: case ZYDIS_MNEMONIC_MOVHPS:
    case ZYDIS_MNEMONIC_MOVQ: case ZYDIS_MNEMONIC_MOVD: case ZYDIS_MNEMONIC_LDDQU:
    case ZYDIS_MNEMONIC_VMOVAPS: case ZYDIS_MNEMONIC_VMOVUPS: case ZYDIS_MNEMONIC_VMOVDQA:
    case ZYDIS_MNEMONIC_VMOVDQU: case ZYDIS_MNEMONIC_VMOVDQA32: case ZYDIS_MNEMONIC_VMOVDQA64:
    case ZYDIS_MNEMONIC_VMOVDQU8: case ZYDIS_MNEMONIC_VMOVDQU16: case ZYDIS_MNEMONIC_VMOVDQU32:
    case ZYDIS_MNEMONIC_VMOVDQU64: case ZYDIS_MNEMONIC_VMOVNTPS: case ZYDIS_MNEMONIC_VMOVNTDQ:
    case ZYDIS_MNEMONIC_VMOVNTDQA: case ZYDIS_MNEMONIC_VMOVLPS: case ZYDIS_MNEMONIC_VMOVHPS:
    case ZYDIS_MNEMONIC_VMOVQ: case ZYDIS_MNEMONIC_VMOVD: case ZYDIS_MNEMONIC_VLDDQU:
        return 1;
    default:
        return 0;
    }
}

/* Bitwise logic, shuffles, blends, inserts, extracts and broadcasts of the
 * "ps"/"pd" family: typed FP by the ISA but used on integer data too (and
 * FP data goes through pshufd). They neither make a value FP nor show it. */
static int fpness_typeless_op(const ZydisDecodedInstruction *in)
{
    if (in->meta.category == ZYDIS_CATEGORY_LOGICAL_FP)
        return 1;
    switch (in->mnemonic) {
    case ZYDIS_MNEMONIC_SHUFPS: case ZYDIS_MNEMONIC_SHUFPD: case ZYDIS_MNEMONIC_UNPCKLPS:
    case ZYDIS_MNEMONIC_UNPCKHPS: case ZYDIS_MNEMONIC_UNPCKLPD: case ZYDIS_MNEMONIC_UNPCKHPD:
    case ZYDIS_MNEMONIC_MOVLHPS: case ZYDIS_MNEMONIC_MOVHLPS: case ZYDIS_MNEMONIC_BLENDPS:
    case ZYDIS_MNEMONIC_BLENDPD: case ZYDIS_MNEMONIC_BLENDVPS: case ZYDIS_MNEMONIC_BLENDVPD:
    case ZYDIS_MNEMONIC_INSERTPS: case ZYDIS_MNEMONIC_EXTRACTPS: case ZYDIS_MNEMONIC_VSHUFPS:
    case ZYDIS_MNEMONIC_VSHUFPD: case ZYDIS_MNEMONIC_VUNPCKLPS: case ZYDIS_MNEMONIC_VUNPCKHPS:
    case ZYDIS_MNEMONIC_VUNPCKLPD: case ZYDIS_MNEMONIC_VUNPCKHPD: case ZYDIS_MNEMONIC_VMOVLHPS:
    case ZYDIS_MNEMONIC_VMOVHLPS: case ZYDIS_MNEMONIC_VBLENDPS: case ZYDIS_MNEMONIC_VBLENDPD:
    case ZYDIS_MNEMONIC_VBLENDVPS: case ZYDIS_MNEMONIC_VBLENDVPD: case ZYDIS_MNEMONIC_VINSERTPS:
    case ZYDIS_MNEMONIC_VEXTRACTPS: case ZYDIS_MNEMONIC_VPERMILPS: case ZYDIS_MNEMONIC_VPERMILPD:
    case ZYDIS_MNEMONIC_VPERM2F128: case ZYDIS_MNEMONIC_VPERMPS: case ZYDIS_MNEMONIC_VPERMPD:
    case ZYDIS_MNEMONIC_VINSERTF128: case ZYDIS_MNEMONIC_VEXTRACTF128: case ZYDIS_MNEMONIC_VBROADCASTSS:
    case ZYDIS_MNEMONIC_VBROADCASTSD: case ZYDIS_MNEMONIC_VBROADCASTF128: case ZYDIS_MNEMONIC_VEXTRACTF32X4:
    case ZYDIS_MNEMONIC_VEXTRACTF64X2: case ZYDIS_MNEMONIC_VEXTRACTF32X8: case ZYDIS_MNEMONIC_VEXTRACTF64X4:
        return 1;
    default:
        return 0;
    }
}

static int fpness_typeless(const ZydisDecodedInstruction *in)
{
    return fpness_typeless_move(in->mnemonic) || fpness_typeless_op(in);
}

static uint8_t fpness_of_element(ZydisElementType t)
{
    if (t == ZYDIS_ELEMENT_TYPE_FLOAT32)
        return ACCESS_F32;
    if (t == ZYDIS_ELEMENT_TYPE_FLOAT64)
        return ACCESS_F64;
    return ACCESS_INT;
}

static int fpness_is_vector(ZydisRegister r)
{
    ZydisRegisterClass c = ZydisRegisterGetClass(r);
    return c == ZYDIS_REGCLASS_XMM || c == ZYDIS_REGCLASS_YMM || c == ZYDIS_REGCLASS_ZMM;
}

/* The first explicit vector-register operand with one of the actions. */
static const ZydisDecodedOperand *fpness_vector_operand(const decode_insn *d, ZydisOperandActions mask)
{
    for (unsigned i = 0; i < d->in.operand_count; i++) {
        const ZydisDecodedOperand *o = &d->ops[i];
        if (o->visibility == ZYDIS_OPERAND_VISIBILITY_EXPLICIT && o->type == ZYDIS_OPERAND_TYPE_REGISTER &&
            (o->actions & mask) && fpness_is_vector(o->reg.value))
            return o;
    }
    return NULL;
}

/* The operand through which d does one of the actions to reg (any alias:
 * xmm0 is part of ymm0), or NULL. */
static const ZydisDecodedOperand *fpness_touches(const decode_insn *d, ZydisRegister reg,
                                                  ZydisOperandActions mask)
{
    for (unsigned i = 0; i < d->in.operand_count; i++) {
        const ZydisDecodedOperand *o = &d->ops[i];
        if (o->type == ZYDIS_OPERAND_TYPE_REGISTER && (o->actions & mask) && decode_widest(o->reg.value) == reg)
            return o;
    }
    return NULL;
}

/* pxor x,x (and its kin): zero is as much an integer as a double, and the
 * old value of x is not used. */
static int fpness_zero_idiom(const decode_insn *d)
{
    switch (d->in.mnemonic) {
    case ZYDIS_MNEMONIC_PXOR: case ZYDIS_MNEMONIC_VPXOR: case ZYDIS_MNEMONIC_VPXORD:
    case ZYDIS_MNEMONIC_VPXORQ: case ZYDIS_MNEMONIC_XORPS: case ZYDIS_MNEMONIC_XORPD:
    case ZYDIS_MNEMONIC_VXORPS: case ZYDIS_MNEMONIC_VXORPD:
        break;
    default:
        return 0;
    }
    ZydisRegister src = ZYDIS_REGISTER_NONE;
    for (unsigned i = 0; i < d->in.operand_count_visible; i++) {
        const ZydisDecodedOperand *o = &d->ops[i];
        if (!(o->actions & ZYDIS_OPERAND_ACTION_MASK_READ))
            continue;
        if (o->type != ZYDIS_OPERAND_TYPE_REGISTER || (src != ZYDIS_REGISTER_NONE && o->reg.value != src))
            return 0;
        src = o->reg.value;
    }
    return src != ZYDIS_REGISTER_NONE;
}

/* What the instruction that wrote a register (through operand w) made:
 * ACCESS_F32/F64/INT, or FPNESS_COPY with *src the register it copied. */
static uint8_t fpness_producer(const decode_insn *p, const ZydisDecodedOperand *w, ZydisRegister *src)
{
    if (fpness_zero_idiom(p))
        return ACCESS_INT;
    if (fpness_typeless_move(p->in.mnemonic)) {
        const ZydisDecodedOperand *s = fpness_vector_operand(p, ZYDIS_OPERAND_ACTION_MASK_READ);
        if (!s || s == w)
            return ACCESS_INT;   /* a load or a move from a GPR: the data's type is not known here */
        *src = decode_widest(s->reg.value);
        return FPNESS_COPY;
    }
    if (fpness_typeless_op(&p->in))
        return ACCESS_INT;
    return fpness_of_element(w->element_type);
}

/* A stored register: the class of the instruction that last wrote it among
 * run[0..n), nearest first, following register copies. */
static uint8_t fpness_produced(ZydisRegister reg, uint64_t pc, const uint64_t *run, unsigned n)
{
    for (unsigned k = 0; k < n && k < FPNESS_MAX_INSNS; k++) {
        uint64_t c = run[n - 1 - k];
        decode_insn p;
        if (c >= pc || !ZYAN_SUCCESS(decode_full((const void *)(uintptr_t)c,
                                                 pc - c < DECODE_MAX_LEN ? (size_t)(pc - c) : DECODE_MAX_LEN, &p)))
            return ACCESS_INT;
        const ZydisDecodedOperand *w = fpness_touches(&p, reg, ZYDIS_OPERAND_ACTION_MASK_WRITE);
        if (!w)
            continue;
        ZydisRegister src = ZYDIS_REGISTER_NONE;
        uint8_t cls = fpness_producer(&p, w, &src);
        if (cls != FPNESS_COPY)
            return cls;
        reg = src;
    }
    return ACCESS_INT;   /* made before the run: a loop-carried value, an argument */
}

/* Control leaves the straight-line code (or may not come back with the
 * registers as they were). */
static int fpness_ends_run(const ZydisDecodedInstruction *in)
{
    switch (in->meta.category) {
    case ZYDIS_CATEGORY_CALL: case ZYDIS_CATEGORY_RET: case ZYDIS_CATEGORY_UNCOND_BR:
    case ZYDIS_CATEGORY_COND_BR: case ZYDIS_CATEGORY_SYSCALL: case ZYDIS_CATEGORY_INTERRUPT:
        return 1;
    default:
        return 0;
    }
}

/* A loaded register: the class of the first typed instruction that reads
 * it, in straight-line code from pc on, following register copies; a store
 * or a typeless op on the way shows nothing and the scan goes on. */
static uint8_t fpness_consumed(ZydisRegister reg, uint64_t pc)
{
    for (unsigned k = 0; k < FPNESS_MAX_INSNS; k++) {
        decode_insn u;
        if (!ZYAN_SUCCESS(decode_read_at(pc, &u)) || fpness_zero_idiom(&u))
            break;
        const ZydisDecodedOperand *r = fpness_touches(&u, reg, ZYDIS_OPERAND_ACTION_MASK_READ);
        if (r && fpness_typeless_move(u.in.mnemonic)) {
            const ZydisDecodedOperand *dst = fpness_vector_operand(&u, ZYDIS_OPERAND_ACTION_MASK_WRITE);
            if (dst)
                reg = decode_widest(dst->reg.value);
        } else if (r && !fpness_typeless_op(&u.in)) {
            return fpness_of_element(r->element_type);
        } else if (!r && fpness_touches(&u, reg, ZYDIS_OPERAND_ACTION_MASK_WRITE)) {
            break;   /* overwritten unused */
        }
        if (fpness_ends_run(&u.in))
            break;
        pc += u.in.length;
    }
    return ACCESS_INT;
}

uint8_t fpness_of_move(const decode_insn *d, const ZydisDecodedOperand *m)
{
    return fpness_typeless(&d->in) ? ACCESS_INT : fpness_of_element(m->element_type);
}

uint8_t fpness_of(const decode_insn *d, uint64_t pc, const uint64_t *run, unsigned n)
{
    const ZydisDecodedOperand *m = NULL;
    if (decode_mem_operand(d, &m) != DROP_NONE)
        return ACCESS_INT;
    if (!fpness_typeless(&d->in))
        return fpness_of_element(m->element_type);
    int store = (m->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) != 0;
    const ZydisDecodedOperand *r = fpness_vector_operand(d, store ? ZYDIS_OPERAND_ACTION_MASK_READ
                                                                  : ZYDIS_OPERAND_ACTION_MASK_WRITE);
    if (!r)
        return ACCESS_INT;   /* movq/movd through a GPR */
    ZydisRegister reg = decode_widest(r->reg.value);
    return store ? fpness_produced(reg, pc, run, n) : fpness_consumed(reg, pc + d->in.length);
}

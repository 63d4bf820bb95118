/*
 * exact_instrument.c - adds a helper call after every load and store of a
 * superblock (VEX IR), a call/return record at its end, and the guest
 * instruction count when --exact-limit is set.
 *
 * Helpers come after their access so that an access that faults (and hands
 * the program a SIGSEGV) leaves no trace. Values reach the helper as 64-bit
 * lanes: a 16- or 32-byte vector access is 2 or 4 accesses of 8 bytes, so
 * the pairing code never sees more than 8 bytes with a known value. Only
 * the kinds a mode needs are instrumented: silent-store never looks at
 * loads, silent-load never at stores.
 */
#include "exact.h"

#include "pub_tool_libcassert.h"
#include "pub_tool_machine.h"
#include "pub_tool_tooliface.h"
#include "libvex_guest_amd64.h"

#define GUEST_RBP ((Int)offsetof(VexGuestAMD64State, guest_RBP))
#define GUEST_R13 ((Int)offsetof(VexGuestAMD64State, guest_R13))
#define GUEST_R15 ((Int)offsetof(VexGuestAMD64State, guest_R15))

typedef struct ictx {
    IRSB *sb;
    Addr pc;          /* the guest instruction being copied */
    UInt len;
    Int sp_offset;    /* of the guest stack pointer in the guest state */
    Bool loads, stores;
    Bool moves_sp;    /* the instruction writes the stack pointer: push, pop, call, ret, leave */
    const IRSB *in;   /* the superblock being copied, and its current instruction's IMark */
    Int imark;
} ictx;

static IRExpr *tmp_of(ictx *c, IRType ty, IRExpr *e)
{
    IRTemp t = newIRTemp(c->sb->tyenv, ty);
    addStmtToIRSB(c->sb, IRStmt_WrTmp(t, e));
    return IRExpr_RdTmp(t);
}

static IRExpr *unop(ictx *c, IROp op, IRType ty, IRExpr *e)
{
    return tmp_of(c, ty, IRExpr_Unop(op, e));
}

/* The value of an access as a 64-bit atom, or NULL when its type has no
 * such form (decimal FP, 128-bit floats: treated as values unknown). */
static IRExpr *widen(ictx *c, IRExpr *e, IRType ty)
{
    switch (ty) {
    case Ity_I8: return unop(c, Iop_8Uto64, Ity_I64, e);
    case Ity_I16: return unop(c, Iop_16Uto64, Ity_I64, e);
    case Ity_I32: return unop(c, Iop_32Uto64, Ity_I64, e);
    case Ity_I64: return e;
    case Ity_F64: return unop(c, Iop_ReinterpF64asI64, Ity_I64, e);
    case Ity_F32: return unop(c, Iop_32Uto64, Ity_I64, unop(c, Iop_ReinterpF32asI32, Ity_I32, e));
    default: return NULL;
    }
}

static void emit_dirty(ictx *c, const HChar *name, void *fn, IRExpr **args, IRExpr *guard)
{
    IRDirty *d = unsafeIRDirty_0_N(0, name, VG_(fnptr_to_fnentry)(fn), args);
    if (guard)
        d->guard = guard;
    addStmtToIRSB(c->sb, IRStmt_Dirty(d));
}

static IRExpr *stack_pointer(ictx *c)
{
    return tmp_of(c, Ity_I64, IRExpr_Get(c->sp_offset, Ity_I64));
}

static IRExpr *addr_plus(ictx *c, IRExpr *addr, UInt off)
{
    if (off == 0)
        return addr;
    return tmp_of(c, Ity_I64, IRExpr_Binop(Iop_Add64, addr, IRExpr_Const(IRConst_U64(off))));
}

static IRExpr *guest_reg(ictx *c, Int offset)
{
    return tmp_of(c, Ity_I64, IRExpr_Get(offset, Ity_I64));
}

/* A JVM's accesses also pass rbp and r13, where its Java frames start
 * (exact_java.c). */
static void emit_known(ictx *c, IRExpr *addr, IRExpr *value, UInt size, UInt kind, IRExpr *guard)
{
    ULong info = (ULong)c->pc | (ULong)size << 48 | (ULong)kind << 52 | (ULong)c->len << 55;
    if (exact_opts.java)
        emit_dirty(c, "exact_on_access_java", exact_on_access_java,
                   mkIRExprVec_6(addr, value, mkIRExpr_HWord(info), stack_pointer(c),
                                 guest_reg(c, GUEST_RBP), guest_reg(c, GUEST_R13)), guard);
    else
        emit_dirty(c, "exact_on_access", exact_on_access,
                   mkIRExprVec_4(addr, value, mkIRExpr_HWord(info), stack_pointer(c)), guard);
}

static void emit_wide(ictx *c, IRExpr *addr, UInt size, UInt kind, IRExpr *guard)
{
    ULong size_kind = (ULong)size | (ULong)kind << 32, pc_len = (ULong)c->pc | (ULong)c->len << 48;
    if (exact_opts.java)
        emit_dirty(c, "exact_on_access_wide_java", exact_on_access_wide_java,
                   mkIRExprVec_6(addr, mkIRExpr_HWord(size_kind), mkIRExpr_HWord(pc_len), stack_pointer(c),
                                 guest_reg(c, GUEST_RBP), guest_reg(c, GUEST_R13)), guard);
    else
        emit_dirty(c, "exact_on_access_wide", exact_on_access_wide,
                   mkIRExprVec_4(addr, mkIRExpr_HWord(size_kind), mkIRExpr_HWord(pc_len),
                                 stack_pointer(c)), guard);
}

/* The expression that defines tmp anywhere in the superblock (temps are
 * assigned once; VEX may reuse one instruction's GET in the next). */
static const IRExpr *sb_definition(const ictx *c, IRTemp tmp)
{
    for (Int i = 0; i < c->in->stmts_used; i++)
        if (c->in->stmts[i]->tag == Ist_WrTmp && c->in->stmts[i]->Ist.WrTmp.tmp == tmp)
            return c->in->stmts[i]->Ist.WrTmp.data;
    return NULL;
}

/* Whether an address is the JVM's runtime state, left out as the sampled
 * JVM front end leaves it out (monitor.c): a constant (RIP-relative: a JIT
 * method's constant table) or based on r15 (HotSpot's thread structure:
 * TLAB top, safepoint polls, flags). The base register is the leftmost
 * operand of the address's additions. */
static Bool runtime_state(const ictx *c, const IRExpr *addr)
{
    Bool added = False;
    for (Int depth = 0; depth < 8 && addr; depth++) {
        if (addr->tag == Iex_Const)
            return !added;
        if (addr->tag == Iex_Get)
            return addr->Iex.Get.offset == GUEST_R15;
        if (addr->tag == Iex_RdTmp) {
            addr = sb_definition(c, addr->Iex.RdTmp.tmp);
        } else if (addr->tag == Iex_Binop && addr->Iex.Binop.op == Iop_Add64) {
            addr = addr->Iex.Binop.arg1;
            added = True;
        } else {
            return False;
        }
    }
    return False;
}

/* One access of type ty at addr with value e (an atom), split into lanes. */
static void emit_access(ictx *c, IRExpr *addr, IRExpr *e, IRType ty, UInt kind, IRExpr *guard)
{
    static const IROp v256[4] = { Iop_V256to64_0, Iop_V256to64_1, Iop_V256to64_2, Iop_V256to64_3 };
    if (((kind & EXACT_LOAD) && !c->loads) || (kind == EXACT_STORE && !c->stores) || c->moves_sp)
        return;
    if (exact_opts.java && runtime_state(c, addr))
        return;
    if (ty == Ity_V128 || ty == Ity_I128) {
        Bool v = ty == Ity_V128;
        emit_known(c, addr, unop(c, v ? Iop_V128to64 : Iop_128to64, Ity_I64, e), 8, kind, guard);
        emit_known(c, addr_plus(c, addr, 8), unop(c, v ? Iop_V128HIto64 : Iop_128HIto64, Ity_I64, e),
                   8, kind, guard);
        return;
    }
    if (ty == Ity_V256) {
        for (UInt k = 0; k < 4; k++)
            emit_known(c, addr_plus(c, addr, 8 * k), unop(c, v256[k], Ity_I64, e), 8, kind, guard);
        return;
    }
    IRExpr *value = widen(c, e, ty);
    if (value)
        emit_known(c, addr, value, sizeofIRType(ty), kind, guard);
    else
        emit_wide(c, addr, sizeofIRType(ty), kind, guard);
}

/* cmpxchg: the load always happens, the store only when it succeeds. */
static void emit_cas(ictx *c, const IRCAS *cas)
{
    IRType ty = typeOfIRExpr(c->sb->tyenv, cas->dataLo);
    if (cas->dataHi) {   /* cmpxchg16b */
        emit_wide(c, cas->addr, 2 * sizeofIRType(ty), EXACT_LOAD, NULL);
        emit_wide(c, cas->addr, 2 * sizeofIRType(ty), EXACT_STORE, NULL);
        return;
    }
    IRExpr *old = IRExpr_RdTmp(cas->oldLo);
    emit_access(c, cas->addr, old, ty,
                exact_opts.mode == EXACT_SILENT_LOAD ? EXACT_LOAD | EXACT_STORE : EXACT_LOAD, NULL);
    IRExpr *a = widen(c, old, ty), *b = widen(c, cas->expdLo, ty);
    if (a && b && c->stores)
        emit_access(c, cas->addr, cas->dataLo, ty, EXACT_STORE,
                    tmp_of(c, Ity_I1, IRExpr_Binop(Iop_CmpEQ64, a, b)));
}

static void emit_dirty_effects(ictx *c, const IRDirty *d)
{
    if (d->mFx == Ifx_None || d->mSize <= 0)
        return;
    if ((d->mFx == Ifx_Read || d->mFx == Ifx_Modify) && c->loads)
        emit_wide(c, d->mAddr, (UInt)d->mSize, EXACT_LOAD, NULL);
    if ((d->mFx == Ifx_Write || d->mFx == Ifx_Modify) && c->stores)
        emit_wide(c, d->mAddr, (UInt)d->mSize, EXACT_STORE, NULL);
}

/* Whether the instruction starting at stmts[i] (its IMark) writes the
 * stack pointer. Its memory accesses are then the implicit stack traffic
 * of push/pop/call/ret/leave, which the sampled engine leaves out too
 * (decode.c): return addresses and saved registers are nothing a
 * programmer can change. */
static Bool writes_sp(const IRSB *sb, Int i, Int sp_offset)
{
    for (i++; i < sb->stmts_used && sb->stmts[i]->tag != Ist_IMark; i++)
        if (sb->stmts[i]->tag == Ist_Put && sb->stmts[i]->Ist.Put.offset == sp_offset)
            return True;
    return False;
}

/* The expression that defines tmp inside the current instruction, or NULL. */
static const IRExpr *definition(const ictx *c, IRTemp tmp)
{
    for (Int i = c->imark + 1; i < c->in->stmts_used && c->in->stmts[i]->tag != Ist_IMark; i++)
        if (c->in->stmts[i]->tag == Ist_WrTmp && c->in->stmts[i]->Ist.WrTmp.tmp == tmp)
            return c->in->stmts[i]->Ist.WrTmp.data;
    return NULL;
}

/* Whether two address atoms compute the same value: VEX may compute the
 * address of a read-modify-write twice (t1 = GET(rbp) + k; t5 = GET(rbp)
 * + k), so equal atoms are not enough; equal definitions (a few levels
 * deep, within the instruction) are. */
static Bool same_value(const ictx *c, const IRExpr *a, const IRExpr *b, Int depth)
{
    if (isIRAtom(a) && isIRAtom(b) && eqIRAtom(a, b))
        return True;
    if (depth == 0 || a->tag != b->tag)
        return False;
    if (a->tag == Iex_RdTmp) {
        const IRExpr *da = definition(c, a->Iex.RdTmp.tmp), *db = definition(c, b->Iex.RdTmp.tmp);
        return da && db && same_value(c, da, db, depth - 1);
    }
    if (a->tag == Iex_Get)
        return a->Iex.Get.offset == b->Iex.Get.offset && a->Iex.Get.ty == b->Iex.Get.ty;
    if (a->tag == Iex_Binop)
        return a->Iex.Binop.op == b->Iex.Binop.op &&
               same_value(c, a->Iex.Binop.arg1, b->Iex.Binop.arg1, depth - 1) &&
               same_value(c, a->Iex.Binop.arg2, b->Iex.Binop.arg2, depth - 1);
    return False;
}

/* Whether the current instruction also stores to addr: a load from it is
 * then the read half of a read-modify-write (add %eax,(%rdi), lock xadd). */
static Bool stores_to(const ictx *c, const IRExpr *addr)
{
    for (Int i = c->imark + 1; i < c->in->stmts_used && c->in->stmts[i]->tag != Ist_IMark; i++) {
        const IRStmt *st = c->in->stmts[i];
        if ((st->tag == Ist_Store && same_value(c, st->Ist.Store.addr, addr, 4)) ||
            (st->tag == Ist_StoreG && same_value(c, st->Ist.StoreG.details->addr, addr, 4)) ||
            st->tag == Ist_CAS)
            return True;
    }
    return False;
}

/* The kind of a load. In silent-load mode a read-modify-write is neither a
 * C1 (the sampled mode samples pure loads) nor silent as a C2 (the sampled
 * mode cannot see what it loaded): it is marked as both kinds. */
static UInt load_kind(const ictx *c, const IRExpr *addr)
{
    return exact_opts.mode == EXACT_SILENT_LOAD && stores_to(c, addr) ? EXACT_LOAD | EXACT_STORE
                                                                       : EXACT_LOAD;
}

static void instrument_stmt(ictx *c, IRStmt *st)
{
    IRTypeEnv *env = c->sb->tyenv;
    addStmtToIRSB(c->sb, st);
    switch (st->tag) {
    case Ist_IMark:
        c->pc = (Addr)st->Ist.IMark.addr;
        c->len = st->Ist.IMark.len;
        break;
    case Ist_WrTmp:
        if (st->Ist.WrTmp.data->tag == Iex_Load)
            emit_access(c, st->Ist.WrTmp.data->Iex.Load.addr, IRExpr_RdTmp(st->Ist.WrTmp.tmp),
                        st->Ist.WrTmp.data->Iex.Load.ty,
                        load_kind(c, st->Ist.WrTmp.data->Iex.Load.addr), NULL);
        break;
    case Ist_Store:
        emit_access(c, st->Ist.Store.addr, st->Ist.Store.data,
                    typeOfIRExpr(env, st->Ist.Store.data), EXACT_STORE, NULL);
        break;
    case Ist_StoreG: {
        IRStoreG *sg = st->Ist.StoreG.details;
        emit_access(c, sg->addr, sg->data, typeOfIRExpr(env, sg->data), EXACT_STORE, sg->guard);
        break;
    }
    case Ist_LoadG: {
        IRLoadG *lg = st->Ist.LoadG.details;
        IRType ty = Ity_INVALID, wide = Ity_INVALID;
        typeOfIRLoadGOp(lg->cvt, &wide, &ty);
        /* dst holds the loaded value widened: its low bytes are the access. */
        IRExpr *v = widen(c, IRExpr_RdTmp(lg->dst), wide);
        if (v && c->loads)
            emit_known(c, lg->addr, v, sizeofIRType(ty), EXACT_LOAD, lg->guard);
        break;
    }
    case Ist_CAS:
        emit_cas(c, st->Ist.CAS.details);
        break;
    case Ist_Dirty:
        emit_dirty_effects(c, st->Ist.Dirty.details);
        break;
    default:
        break;
    }
}

/* Guest instructions run, and a guarded call when the next limit check is due. */
static void emit_count(ictx *c, UInt ninsns)
{
    IRExpr *n = tmp_of(c, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&exact_insns)));
    IRExpr *sum = tmp_of(c, Ity_I64, IRExpr_Binop(Iop_Add64, n, IRExpr_Const(IRConst_U64(ninsns))));
    addStmtToIRSB(c->sb, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)&exact_insns), sum));
    IRExpr *due = tmp_of(c, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&exact_next_check)));
    IRExpr *hit = tmp_of(c, Ity_I1, IRExpr_Binop(Iop_CmpLE64U, due, sum));
    emit_dirty(c, "exact_check_limit", exact_check_limit, mkIRExprVec_0(), hit);
}

static UInt count_insns(const IRSB *sb)
{
    UInt n = 0;
    for (Int i = 0; i < sb->stmts_used; i++)
        n += sb->stmts[i] && sb->stmts[i]->tag == Ist_IMark;
    return n;
}

IRSB *exact_instrument(VgCallbackClosure *closure, IRSB *sb_in, const VexGuestLayout *layout,
                       const VexGuestExtents *vge, const VexArchInfo *arch, IRType gw, IRType hw)
{
    (void)closure; (void)vge; (void)arch; (void)hw;
    if (gw != Ity_I64)
        VG_(tool_panic)("wasp exact mode supports 64-bit guests only");
    ictx c = { .sb = deepCopyIRSBExceptStmts(sb_in), .sp_offset = layout->offset_SP, .in = sb_in };
    c.loads = exact_opts.mode != EXACT_SILENT_STORE;
    c.stores = exact_opts.mode != EXACT_SILENT_LOAD;
    Int i = 0;
    for (; i < sb_in->stmts_used && sb_in->stmts[i]->tag != Ist_IMark; i++)
        addStmtToIRSB(c.sb, sb_in->stmts[i]);
    if (exact_opts.limit_insns || exact_opts.limit_ms)
        emit_count(&c, count_insns(sb_in));
    for (; i < sb_in->stmts_used; i++) {
        if (!sb_in->stmts[i] || sb_in->stmts[i]->tag == Ist_NoOp)
            continue;
        if (sb_in->stmts[i]->tag == Ist_IMark) {
            c.moves_sp = writes_sp(sb_in, i, c.sp_offset);
            c.imark = i;
        }
        instrument_stmt(&c, sb_in->stmts[i]);
    }
    /* The stack pointer after the block: after a call, the callee's on entry;
     * after a ret, its caller's (the return address popped). */
    if (sb_in->jumpkind == Ijk_Call)
        emit_dirty(&c, "exact_call", exact_call,
                   mkIRExprVec_2(mkIRExpr_HWord(c.pc), stack_pointer(&c)), NULL);
    else if (sb_in->jumpkind == Ijk_Ret)
        emit_dirty(&c, "exact_ret", exact_ret, mkIRExprVec_1(stack_pointer(&c)), NULL);
    return c.sb;
}

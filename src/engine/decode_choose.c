/*
 * decode_choose.c - which access a timer sample takes: one drawn uniformly
 * from the accesses of the wanted kind in the sample's region.
 *
 * Why not the access nearest the pc: where the timer lands depends on the
 * pipeline, not on how often each access runs. It lands behind long-latency
 * instructions and, under QEMU TCG, only at block starts, so "the nearest
 * access" made one store of a two-store loop take ~91% of the samples on
 * hardware and 100% under TCG, and left the store after a multiply almost
 * none. Drawing uniformly within the region makes every access of it
 * equally likely per execution, whatever the timer does inside it. Across
 * regions a sample lands by time: the caller weighs its pair by the
 * region's accesses per instruction (region_cands / region_insns), which
 * turns time into instructions, so that a region dense in accesses is not
 * outweighed by one that spends the same time on arithmetic; what stays
 * time-weighted is cycles per instruction (docs/how-it-works.md).
 *
 * A region is straight-line code: it starts after a call, return, jump or
 * backward branch, or at a loop head (a back edge's target), and ends with
 * the next call, return, jump or backward branch, or before the next loop
 * head: a pass through it runs from where it entered to its end, skipping
 * what its forward branches jump over. An if's arm inside it is not its
 * own: the scan steps over it, and the arm is a region of its own
 * (decode_arm.c says why). Forward branches do not end it, nor
 * do other branch targets start one: JIT code splits a loop body into many
 * basic blocks with checks that almost never branch (bounds, nulls,
 * safepoints), enters its loops past the head (`jmp head+3`) and returns
 * from slow paths into them, and a sample in a block without a store of
 * its own would be lost (95% of them were, in a C2 loop under QEMU); and a
 * region cut at each target left an access before a loop body's ifs only
 * the samples that landed before the first of them, while one after them
 * drew from samples anywhere (lz4's hash-chain loop: a reload before six
 * targets held 18% of the exact bytes and 0.8% of the sampled; tests/e2e
 * bias_targets read 75% for 50%). Loop heads do cut: a pair counts its
 * region's accesses per instruction as if each pass ran the region whole,
 * and the code before a loop, in the loop's region, made a 7-instruction
 * loop look like 52 (ArrayList.clear under JDK 25: its dead stores fell
 * from first to fourth). A long region is drawn from in fixed parts
 * (decode_sweep.c), the same for every pc in a part.
 *
 * An access after a conditional branch may not run on this pass (a
 * never-taken check, or an if whose arm is rare): counting it anyway would
 * give a rarely run access the weight of the whole region. Such an access
 * is guarded (monitor.c): it counts only if it runs before the pc runs
 * again, so each access of the region weighs by how often it runs. An
 * access behind the pc with a branch target between them may not have run
 * on this pass either (the pass may have jumped past it, or entered the
 * region there, as C2's loops are entered): it is deferred to its next run
 * and guarded the same way, counting only if it runs before the pc does
 * again. Behind the pc with no target between, it ran.
 *
 * A drawn access is taken from the registers when they still hold its
 * address (it ran earlier in the region and nothing since wrote its base or
 * index, or it runs later and nothing before it does). Otherwise the sample
 * defers it: a code breakpoint at its pc (monitor.c) stops the thread just
 * before it runs, where its registers are exact. That costs one trap, not
 * the up-to-dozens of single steps EFLAGS.TF would need to walk there.
 *
 * An access that ran earlier is deferred too when an instruction run since
 * may have touched its bytes: its next access, the other half of its pair,
 * has already happened, and a watch armed now would pair it with the one
 * after (a Java allocation's zeroing store, overwritten by the constructor
 * two instructions later, was paired with a later load: 14% of a Rhino
 * run's stored bytes, dead in the exact mode, read live). "May": the
 * instruction's address is compared when the registers still hold it, and
 * counts as touching when they do not. Implicit stack accesses (push, pop)
 * are not compared.
 *
 * Signal context: no malloc, no locks, no stdio.
 */
#include "decode_internal.h"
#include "fpness.h"


typedef struct region_scan {
    uint64_t pc[DECODE_PART_INSNS];      /* instruction starts, from the region start */
    uint32_t written[DECODE_PART_INSNS]; /* GPRs each one writes */
    uint32_t uses[DECODE_PART_INSNS];    /* an access's address registers (GPRs) */
    uint64_t addr[DECODE_PART_INSNS];    /* behind the pc: where its access went, from the registers now */
    uint8_t len[DECODE_PART_INSNS];      /* ... and its bytes; 0: no explicit access */
    uint8_t unknown[DECODE_PART_INSNS];  /* 1: an access whose address the registers do not give */
    uint8_t cand[DECODE_PART_INSNS];     /* indices of the candidates */
    uint8_t cond[DECODE_PART_INSNS];     /* 1: a conditional branch (it may skip what follows) */
    uint8_t rep[DECODE_PART_INSNS];      /* 1: a candidate rep string instruction (memset, memcpy) */
    unsigned n, ncand;
} region_scan;

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

int decode_is_loop_head(const ZydisDecodedInstruction *in, uint64_t pc, uint64_t target)
{
    return in->meta.category == ZYDIS_CATEGORY_COND_BR && target && target <= pc;
}

int decode_ends_region(const ZydisDecodedInstruction *in, uint64_t pc, uint64_t next)
{
    return decode_is_barrier(in) || decode_is_loop_head(in, pc, decode_branch_target(in, next));
}

static int decode_is_branch(const ZydisDecodedInstruction *in)
{
    return decode_is_barrier(in) || in->meta.category == ZYDIS_CATEGORY_COND_BR;
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

/* Whether d is an access of the wanted kind whose address registers are
 * GPRs (or none, or rip). Branches are not candidates: an indirect call's
 * load is not data the program chose to move. */
static int decode_candidate(const decode_insn *d, const ZydisDecodedOperand *m, uint8_t want)
{
    if (decode_is_branch(&d->in) || !decode_kind_matches(m, want) || decode_skipped(m, want))
        return 0;
    if (m->mem.index != ZYDIS_REGISTER_NONE && decode_greg(m->mem.index) < 0)
        return 0;   /* a vector index (VSIB) */
    return decode_is_rip(m->mem.base) || m->mem.base == ZYDIS_REGISTER_NONE || decode_greg(m->mem.base) >= 0;
}

/* Where instruction i, behind the pc, accessed memory, computed from the
 * sample's registers: right only if nothing between it and the pc wrote
 * them (touched_since checks). */
static void note_access(region_scan *b, unsigned i, const decode_insn *d, const ucontext_t *uc)
{
    mem_access a;
    /* A finished rep touched all its elements, not the one its registers
     * name now: unknown, like an address they no longer give. */
    if (decode_is_rep_string(d) || decode_live(d, b->pc[i], uc, 1, &a) != DROP_NONE) {
        b->unknown[i] = 1;
        return;
    }
    b->addr[i] = a.addr;
    b->len[i] = (uint8_t)a.size;
}

/* A region that runs into a loop head ends before it: the loop's passes
 * enter there, and the code before it (run once per loop) is a region of
 * its own, or a sample in the loop would draw it, and a sample before the
 * loop the loop's accesses, each on passes that do not run it. The scan
 * sees the loop head when it ends at its back edge; a head whose back edge
 * is beyond it comes as the region's end (decode_sweep.c). */
static void stop_at_loop_head(region_scan *b, uint64_t start, const ZydisDecodedInstruction *in, uint64_t pc)
{
    uint64_t target = decode_branch_target(in, pc + in->length);
    if (!decode_is_loop_head(in, pc, target) || target <= start)
        return;
    unsigned n = 0;
    while (n < b->n && b->pc[n] < target)
        n++;
    b->n = n;
    while (b->ncand && b->cand[b->ncand - 1] >= n)
        b->ncand--;
}

/* The next instruction the region's scan decodes after instruction i (d,
 * at pc): past the arm it jumps over, if it does (decode_arm.c). The arm
 * may or may not run on a pass: for what lies behind the pc, it may have
 * written any register and touched any bytes; and the branch does not
 * make what follows it conditional. */
static uint64_t step_over_arm(region_scan *b, unsigned i, const decode_insn *d, uint64_t pc)
{
    uint64_t next = pc + d->in.length, else_at;
    uint64_t arm = b->cond[i] ? decode_arm_end(&d->in, next, &else_at) : 0;
    if (!arm)
        return next;
    b->cond[i] = 0;
    b->written[i] = ~0u;
    b->unknown[i] = 1;
    return arm;
}

/* Decodes the region from its start up to and including the instruction
 * that ends it (or up to end, an if's arm's boundary, when not 0), at most
 * DECODE_PART_INSNS and DECODE_PART_BYTES. With uc,
 * notes where each instruction before rip accessed memory. */
static int scan_region(uint64_t start, uint64_t end, uint8_t want, const ucontext_t *uc, uint64_t rip,
                       region_scan *b)
{
    uint64_t pc = start;
    b->n = b->ncand = 0;
    while (b->n < DECODE_PART_INSNS && pc - start < DECODE_PART_BYTES && (!end || pc < end)) {
        decode_insn d;
        if (!ZYAN_SUCCESS(decode_read_at(pc, &d)))
            return b->n ? 0 : -1;
        unsigned i = b->n++;
        b->pc[i] = pc;
        b->written[i] = decode_written(&d);
        b->uses[i] = 0;
        b->cond[i] = d.in.meta.category == ZYDIS_CATEGORY_COND_BR;
        b->rep[i] = 0;
        b->len[i] = b->unknown[i] = 0;
        const ZydisDecodedOperand *m = NULL;
        if (decode_mem_operand(&d, &m) == DROP_NONE) {
            b->uses[i] = decode_reg_bit(m->mem.base) | decode_reg_bit(m->mem.index);
            if (uc && pc < rip)
                note_access(b, i, &d, uc);
            if (decode_candidate(&d, m, want)) {
                b->cand[b->ncand++] = (uint8_t)i;
                b->rep[i] = decode_is_rep_string(&d);
            }
        }
        if (decode_ends_region(&d.in, pc, pc + d.in.length)) {
            stop_at_loop_head(b, start, &d.in, pc);
            break;
        }
        pc = step_over_arm(b, i, &d, pc);
    }
    return 0;
}

unsigned decode_region_candidates(uint64_t start, uint64_t end, uint8_t want)
{
    region_scan b;
    return scan_region(start, end, want, NULL, 0, &b) < 0 ? 0 : b.ncand;
}

/* Index of the first instruction at or after rip. */
static unsigned index_of(const region_scan *b, uint64_t rip)
{
    unsigned i = 0;
    while (i < b->n && b->pc[i] < rip)
        i++;
    return i;
}

/* Registers written between instructions lo (inclusive) and hi (exclusive). */
static uint32_t written_between(const region_scan *b, unsigned lo, unsigned hi)
{
    uint32_t w = 0;
    for (unsigned i = lo; i < hi; i++)
        w |= b->written[i];
    return w;
}

/* Whether a conditional branch between instructions lo (inclusive) and
 * hi (exclusive) may skip hi on this pass. */
static int branch_between(const region_scan *b, unsigned lo, unsigned hi)
{
    for (unsigned i = lo; i < hi; i++)
        if (b->cond[i])
            return 1;
    return 0;
}

/* Whether an instruction between the drawn access c (behind the pc) and
 * the pc at may have touched its bytes a: then the pair it starts has
 * already ended. */
static int touched_since(const region_scan *b, unsigned c, unsigned at, const mem_access *a)
{
    for (unsigned i = c + 1; i < at; i++) {
        if (b->unknown[i] || (b->len[i] && (b->uses[i] & written_between(b, i + 1, at))))
            return 1;
        if (b->len[i] && b->addr[i] < a->addr + a->size && a->addr < b->addr[i] + b->len[i])
            return 1;
    }
    return 0;
}

/* A deferred access: everything about it that does not depend on
 * registers (kind, width, how it is addressed); the address comes when
 * its code breakpoint stops the thread. */
static enum drop_reason describe_deferred(const decode_insn *d, uint64_t pc, mem_access *out)
{
    static const ucontext_t no_registers;
    enum drop_reason r = decode_live(d, pc, &no_registers, 0, out);
    out->addr = 0;
    out->deferred = 1;
    return r;
}

enum drop_reason decode_choose(uint64_t start, uint64_t target, uint64_t end, uint64_t rip, uint8_t want,
                               uint64_t draw, const ucontext_t *uc, mem_access *out)
{
    region_scan b;
    decode_insn d;
    if (scan_region(start, end, want, uc, rip, &b) < 0)
        return DROP_DECODE_FAILED;
    if (b.ncand == 0)
        return DROP_NOT_MEMORY;
    unsigned c = b.cand[draw % b.ncand], at = index_of(&b, rip);
    if (at >= b.n || b.pc[at] != rip)
        return DROP_NO_BOUNDARY;   /* the code changed since its region was cached */
    /* A rep runs one element at a time: a sample in one with elements left
     * landed in its elements' time and takes it, as a region of one
     * instruction (one access per step). Drawn like the others, its elements
     * would weigh as one access of the region per pass, however many it
     * writes (rep strings held 8.4% of a Saxon run's dead-store bytes in the
     * exact mode, 0.5% sampled). */
    int in_string = b.rep[at] && uc->uc_mcontext.gregs[REG_RCX] != 0;
    if (in_string)
        c = at;
    uint64_t pc = b.pc[c];
    if (!ZYAN_SUCCESS(decode_read_at(pc, &d)))
        return DROP_DECODE_FAILED;
    enum drop_reason r;
    *out = (mem_access){ 0 };
    int past_target = c < at && target > pc;
    if (past_target)
        r = describe_deferred(&d, pc, out);         /* it may not have run on this pass */
    else if (c < at && !(b.uses[c] & written_between(&b, c, at))) {
        r = decode_live(&d, pc, uc, 1, out);        /* ran, registers still hold its address */
        if (r == DROP_NONE && touched_since(&b, c, at, out)) {
            r = describe_deferred(&d, pc, out);     /* its pair ended: take its next run */
            out->touched = 1;
        }
    } else if (c >= at && !(b.uses[c] & written_between(&b, at, c))) {
        r = decode_live(&d, pc, uc, 0, out);        /* runs next, registers already hold it */
        out->ahead = 1;
    } else
        r = describe_deferred(&d, pc, out);
    if (r == DROP_NONE) {
        out->fp = fpness_of(&d, pc, b.pc, c);
        out->guarded = past_target || (c >= at && branch_between(&b, at, c));
        out->past_target = past_target;
        out->region_insns = in_string ? 1 : (uint8_t)b.n;
        out->region_cands = in_string ? 1 : (uint8_t)b.ncand;
    }
    return r;
}

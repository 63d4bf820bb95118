/*
 * monitor.c - what a sample and a trap do to a thread's watches (monitor.h).
 *
 * Runs in signal context: no malloc, no locks, no stdio. Watched memory is
 * only read after its breakpoint is disabled (a read of an RW-watched word
 * would trap inside the handler), and only through io->read.
 */
#include "monitor.h"

#include "access.h"
#include "decode.h"
#include "detect.h"
#include "locate.h"
#include "memread.h"
#include "perf.h"

/* EFLAGS.RF: the instruction at the pc ignores its code breakpoint once. */
#define X86_EFLAGS_RF_BIT (1u << 16)
#define MONITOR_MAX_PASSED_OVER 16u

static wasp_options opts;
static const engine_frontend *frontend;
static const sampler *active_sampler;
static const monitor_io *io;
static uint64_t current_epoch;
static uint8_t sample_want;   /* wanted_access(), fixed at setup */

void monitor_new_epoch(void)
{
    __atomic_add_fetch(&current_epoch, 1, __ATOMIC_RELEASE);
}

static int wants_kind(uint8_t kind)
{
    if (opts.mode == MODE_SILENT_LOAD)
        return kind == ACCESS_LOAD;  /* after a read-modify-write memory no longer holds what was loaded */
    return (kind & ACCESS_STORE) != 0;
}

/* The kind the mode monitors, and what the look-back should pass over:
 * stack slots when they are excluded (most are addressed through rsp, so
 * an earlier heap access is taken instead of a sample lost), a JIT's
 * constants and its thread structure. */
static uint8_t wanted_access(void)
{
    uint8_t want = opts.mode == MODE_SILENT_LOAD ? ACCESS_LOAD : ACCESS_STORE;
    if (opts.stack == STACK_EXCLUDE)
        want |= ACCESS_SKIP_RSP;
    if (frontend->rip_relative_is_constant)
        want |= ACCESS_SKIP_RIP;
    if (frontend->r15_is_thread)
        want |= ACCESS_SKIP_R15;
    return want;
}

/* Stores far below the stack pointer (beyond the 128-byte red zone) probe
 * the stack's guard pages: JIT method prologues (HotSpot's stack bang),
 * -fstack-clash-protection, alloca probing. They are never read back, so
 * they would fill dead-store reports with pairs nobody can act on. */
static int is_stack_probe(const ucontext_t *uc, uint64_t addr)
{
    uint64_t sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
    return addr < sp - 128 && sp - addr < (1u << 20);
}

static int excluded_stack(const thread_state *t, uint64_t addr)
{
    return opts.stack == STACK_EXCLUDE && addr >= t->stack_lo && addr < t->stack_hi;
}

static int overlaps(uint64_t a, uint32_t alen, uint64_t b, uint32_t blen)
{
    return a < b + blen && b < a + alen;
}

static int overlaps_armed(const thread_state *t, uint64_t addr, uint32_t len)
{
    for (int i = 0; i < t->watch.nslots; i++) {
        const watch_slot *s = &t->watch.slot[i];
        if (s->armed && overlaps(addr, len, s->addr, s->len))
            return 1;
    }
    return 0;
}

/* Around each change of the thread's tables: a guardian reads them only
 * after the thread is dead (guardian.h), so program order in this thread is
 * all it needs; the fence keeps the compiler from moving the change out. */
static void tables_busy(thread_state *t, int busy)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->tables_busy = busy;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* C1 or C2: the calling context of the access, interned in the thread's tree. */
static uint32_t capture_context(thread_state *t, const ucontext_t *uc, uint64_t pc)
{
    frame_key frames[ENGINE_MAX_FRAMES];
    int n = frontend->walk(t->fe_data, uc, pc, frames, ENGINE_MAX_FRAMES);
    if (n <= 0) {
        t->drops[DROP_UNWIND_FAILED]++;
        return 0;
    }
    tables_busy(t, 1);
    uint32_t ctx = cct_intern(&t->contexts, frames, n);
    tables_busy(t, 0);
    if (!ctx)
        t->drops[DROP_TABLE_FULL]++;
    return ctx;
}

static int arm(thread_state *t, int i)
{
    watch_slot *s = &t->watch.slot[i];
    /* A sampled rep stos/movs is about to fill the watch element by element
     * (bytes, for memset): watch only its last byte until then, so the
     * pass costs one trap, not eight; absorb_own_trap widens it. */
    int last_byte_first = s->string && s->priming;
    return io->arm(t, i, last_byte_first ? s->addr + s->len - 1 : s->addr,
                   last_byte_first ? 1 : s->len, opts.mode != MODE_SILENT_STORE);
}

/* A guard and the access it guards go together: ends slot i's partner. */
static void unlink_partner(thread_state *t, int i)
{
    int p = t->watch.slot[i].partner - 1;
    t->watch.slot[i].partner = 0;
    if (p >= 0 && t->watch.slot[p].partner == i + 1) {
        io->disarm(t, p);
        watch_release(&t->watch, p);
    }
}

static void free_slot(thread_state *t, int i)
{
    unlink_partner(t, i);
    watch_release(&t->watch, i);
}

static void release(thread_state *t, int i)
{
    io->disarm(t, i);
    free_slot(t, i);
}

/* Watches armed before the current epoch began watch memory whose objects
 * may have moved (a GC): retire them unfired (paper §5.3). */
static void retire_old_watches(thread_state *t)
{
    uint64_t epoch = __atomic_load_n(&current_epoch, __ATOMIC_ACQUIRE);
    if (t->epoch == epoch)
        return;
    for (int i = 0; i < t->watch.nslots; i++) {
        if (t->watch.slot[i].armed) {
            release(t, i);
            t->drops[DROP_EPOCH]++;
        }
    }
    t->epoch = epoch;
}

/* Why the access a sample or a code breakpoint gave cannot be watched:
 * the filters every access passes, and its bytes fitted to one debug
 * register (*waddr, *wlen). A deferred access (address not known yet)
 * passes only the filters that need no address. */
static enum drop_reason unwatchable(thread_state *t, const ucontext_t *uc, const mem_access *a,
                                    uint64_t *waddr, uint32_t *wlen)
{
    if (!wants_kind(a->kind))
        return DROP_WRONG_KIND;
    if ((a->rip_relative && frontend->rip_relative_is_constant) || (a->base_r15 && frontend->r15_is_thread))
        return DROP_RUNTIME;
    if (a->deferred)
        return DROP_NONE;
    if (is_stack_probe(uc, a->addr))
        return DROP_STACK_PROBE;
    if (excluded_stack(t, a->addr))
        return DROP_STACK;
    /* A rep stos/movs is watched at its next element (decode.c). */
    uint64_t draw = a->string ? 0 : watch_random(&t->watch) >> 32;
    if (watch_fit(a->addr, a->size, draw, waddr, wlen) < 0)
        return DROP_ADDR_UNKNOWN;
    return DROP_NONE;
}

/* A sample lands by time; the access it takes stands for its region's
 * accesses per instruction (decode_choose.c): a pair counts its bytes times
 * that rate, so that time turns into instructions. A sample with no region
 * took the instruction at its pc: one access per instruction. The scale
 * keeps the sparsest region's pairs (1 access in decode_choose's 64
 * instructions) at a whole byte each once rounded. */
#define RATE_SCALE 64.0

static double access_rate(const mem_access *a)
{
    return a->region_insns ? (double)a->region_cands / (double)a->region_insns : 1.0;
}

/* A debug register holds 8 bytes at most: a wider access (a vector store,
 * memcpy's 32-byte moves) is watched through one aligned block of it drawn
 * at random (watch_fit), which stands for the access's other blocks too,
 * so that its pairs count all its bytes, as the exact mode counts them
 * (in 8-byte pieces). */
static uint8_t span_of(const mem_access *a, uint32_t wlen)
{
    /* A rep stos/movs's size is the next elements the watch may cover
     * (decode.c), not one access: its elements count one by one. */
    uint32_t n = !a->string && wlen && a->size > wlen ? a->size / wlen : 1;
    return (uint8_t)(n > 64 ? 64 : n);
}

/* Slot i takes the access a, which has not run when before_run: reads
 * what its bytes hold now, captures its context, arms the watch. */
static void watch_access(thread_state *t, const ucontext_t *uc, int slot, const mem_access *a,
                         uint64_t waddr, uint32_t wlen, int before_run, double weight, double rate)
{
    /* An access that has not run yet (before_run) is primed: its own trap
     * (absorb_own_trap) takes the value it leaves; accesses by other
     * instructions before it are passed over (pass_over). */
    uint64_t value = 0;
    if (io->read(t, waddr, wlen, &value) < 0) {
        t->drops[DROP_UNREADABLE]++;
        return;
    }
    uint32_t ctx = capture_context(t, uc, a->pc);
    if (!ctx)
        return;
    watch_slot *s = &t->watch.slot[slot];
    if (s->armed)
        t->stats[STAT_REPLACED]++;
    /* A rep's watch covers its next elements; the sample stands for one. */
    if (a->string && a->element && wlen > a->element)
        rate *= (double)a->element / (double)wlen;
    *s = (watch_slot){ .armed = 1, .priming = before_run, .addr = waddr, .len = wlen, .fp = a->fp,
                       .string = a->string && before_run, .span = span_of(a, wlen),
                       .pending = watch_bytes_mask(wlen), .value = value, .ctx = ctx,
                       .sample_pc = a->pc, .seen = s->seen, .weight = weight, .rate = rate,
                       .epoch = t->epoch };
    if (arm(t, slot) < 0) {
        release(t, slot);   /* disables whatever the slot watched before */
        t->drops[DROP_UNREADABLE]++;
        return;
    }
    t->stats[STAT_ARMED]++;
}

/* Slot g stops the thread when the pc the sample was taken at runs again:
 * if slot i's access has not run by then, a branch skipped it on that pass
 * (decode_choose.c). The pc itself runs first, on the way out of this
 * handler: the resume flag lets it pass its own breakpoint once. */
static void guard_access(thread_state *t, ucontext_t *uc, int i, int g, int behind)
{
    uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    if (io->arm_code(t, g, pc) < 0) {
        release(t, i);
        t->drops[DROP_UNREADABLE]++;
        return;
    }
    t->watch.slot[g] = (watch_slot){ .armed = 1, .code = 1, .guard = 1, .behind = (uint8_t)behind,
                                     .partner = i + 1, .sample_pc = pc, .epoch = t->epoch };
    t->watch.slot[i].partner = g + 1;
    uc->uc_mcontext.gregs[REG_EFL] |= X86_EFLAGS_RF_BIT;
    t->stats[STAT_GUARDS]++;
}

/* The sampled access runs later with other registers: slot i stops the
 * thread at its pc first (monitor_code_trap). */
static void defer_access(thread_state *t, int slot, const mem_access *a, int skip_runs)
{
    watch_slot *s = &t->watch.slot[slot];
    if (s->armed)
        t->stats[STAT_REPLACED]++;
    *s = (watch_slot){ .armed = 1, .code = 1, .fp = a->fp, .sample_pc = a->pc, .seen = s->seen,
                       .skip_runs = (uint8_t)skip_runs, .weight = t->watch.pick_weight,
                       .rate = access_rate(a), .epoch = t->epoch };
    if (io->arm_code(t, slot, a->pc) < 0) {
        release(t, slot);
        t->drops[DROP_UNREADABLE]++;
        return;
    }
    t->stats[STAT_CODE_BREAKS]++;
    if (a->touched)
        t->stats[STAT_TOUCHED_BEHIND]++;
    if (a->past_target)
        t->stats[STAT_PAST_TARGET]++;
}

/* Why a guard that fired (or expired) drops its sample. */
static enum drop_reason skipped(const watch_slot *guard)
{
    return guard->behind ? DROP_SKIPPED_BEHIND : DROP_SKIPPED_AHEAD;
}

/* A pass through a region takes far less than a sampling interval: a guard
 * still armed at the next sample means control left the region without
 * running the access it guards. */
static void expire_guards(thread_state *t)
{
    for (int i = 0; i < t->watch.nslots; i++) {
        if (t->watch.slot[i].armed && t->watch.slot[i].guard) {
            t->drops[skipped(&t->watch.slot[i])]++;
            release(t, i);
        }
    }
}

/* How many watches a sample may keep armed: one slot stays free for the
 * guard of an access past a branch, which would otherwise be declined
 * whenever the watches filled the slots, a bias against such accesses. */
static int watch_limit(const thread_state *t)
{
    int n = t->watch.nslots, limit = t->budget.slot_limit > 0 ? t->budget.slot_limit : n;
    if (n > 1 && limit > n - 1)
        limit = n - 1;
    return limit;
}

/* The timer lands where the pipeline lets it, and a loop's passes are not
 * all alike to it: a pattern of period two (odd and even elements) drew one
 * kind of pass more often (tests/e2e bias_scatter: 42% for 50% on an AMD
 * EPYC host, the odd passes taking 58% of the samples whichever kind was
 * silent). So half the samples in a loop body take the drawn access's run
 * on the next pass instead of this one: each run is then drawn by the
 * samples of its own pass and of the one before, alike for both kinds. The
 * run comes through a code breakpoint, which lets this pass's run by first
 * when the access had not run yet or was deferred already. Guarded
 * accesses keep their pass (a guard ends at the pc's next run), as do rep
 * strings (the sample took the element running now). Returns the runs to
 * let by, or -1 to take the drawn run. */
static int next_pass(thread_state *t, mem_access *a)
{
    if (!a->loop || a->guarded || a->string || !(watch_random(&t->watch) & 1))
        return -1;
    int skip_runs = a->deferred || a->ahead;
    a->deferred = 1;
    a->ahead = 0;
    a->addr = 0;
    return skip_runs;
}

void monitor_sample(thread_state *t, const siginfo_t *si, ucontext_t *uc, int due_in_handler)
{
    mem_access a = { 0 };
    int before_run;
    uint64_t waddr = 0;
    uint32_t wlen = 0;

    t->stats[STAT_SAMPLES]++;
    if (due_in_handler) {
        t->drops[DROP_IN_HANDLER]++;
        return;
    }
    retire_old_watches(t);
    expire_guards(t);
    enum drop_reason r = active_sampler->take(t, si, uc, frontend, sample_want, &a, &before_run);
    if (r == DROP_NONE)
        r = unwatchable(t, uc, &a, &waddr, &wlen);
    if (r != DROP_NONE) {
        t->drops[r]++;
        return;
    }
    int skip_runs = next_pass(t, &a);
    /* Its own trap already ended any watch on these bytes; a second watch on
     * them would only make the two slots trap together. */
    int slot = !a.deferred && overlaps_armed(t, waddr, wlen) ? -1
                                                             : watch_pick_within(&t->watch, watch_limit(t));
    if (slot < 0) {
        t->stats[STAT_DECLINED]++;
        return;
    }
    int guard = a.guarded ? watch_free_slot(&t->watch, slot) : -1;
    if (a.guarded && guard < 0) {
        t->stats[STAT_GUARD_DECLINED]++;
        return;
    }
    if (t->watch.slot[slot].armed)
        unlink_partner(t, slot);   /* replaced: its guard goes too */
    if (a.deferred) {
        defer_access(t, slot, &a, skip_runs > 0);
        if (skip_runs >= 0 && t->watch.slot[slot].armed)
            t->stats[STAT_NEXT_PASS]++;
    } else
        watch_access(t, uc, slot, &a, waddr, wlen, before_run, t->watch.pick_weight, access_rate(&a));
    if (guard >= 0 && t->watch.slot[slot].armed)
        guard_access(t, uc, slot, guard, a.past_target);
}

/* Stops slot i watching and reads what its bytes hold now (the watch must
 * not see our own read). On failure the slot is freed and -1 returned. */
static int disarm_and_read(thread_state *t, int i, uint64_t *value)
{
    watch_slot *s = &t->watch.slot[i];
    io->disarm(t, i);
    if (io->read(t, s->addr, s->len, value) == 0)
        return 0;
    t->drops[DROP_UNREADABLE]++;
    free_slot(t, i);
    return -1;
}

/* The trap came from the sampled instruction itself, which had not run when
 * the watch was armed: now it has, so take its value and keep watching. */
static void absorb_own_trap(thread_state *t, int i)
{
    watch_slot *s = &t->watch.slot[i];
    if (disarm_and_read(t, i, &s->value) < 0)
        return;
    unlink_partner(t, i);   /* it ran: its guard has done its job */
    s->priming = 0;
    t->stats[STAT_PRIMED]++;
    if (arm(t, i) < 0)
        free_slot(t, i);
}

/* Another instruction touched slot i's bytes before its sampled access
 * ran: that access is still to come on this pass (or its guard ends it),
 * and a pair needs it first. A watch passed over again and again (a hot
 * word whose access no longer comes) gives up. */
static void pass_over(thread_state *t, int i)
{
    watch_slot *s = &t->watch.slot[i];
    if (++s->passed_over > MONITOR_MAX_PASSED_OVER) {
        t->drops[DROP_SKIPPED_AHEAD]++;
        release(t, i);
        return;
    }
    t->stats[STAT_KEPT]++;
    if (arm(t, i) < 0)
        release(t, i);
}

/* Slot i's code breakpoint: the deferred access is about to run, and the
 * registers give its address. The slot becomes its primed watch. */
static void monitor_code_trap(thread_state *t, const siginfo_t *si, ucontext_t *uc, int i)
{
    watch_slot *s = &t->watch.slot[i];
    mem_access a;
    uint64_t waddr = 0, pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    uint32_t wlen = 0;
    uint8_t fp = s->fp;
    int real = !(perf_sig_flags(si) & WASP_TRAP_PERF_FLAG_ASYNC) && pc == s->sample_pc;

    if (real && s->skip_runs) {
        s->skip_runs--;   /* this run goes by (the resume flag); the next one stops again */
        uc->uc_mcontext.gregs[REG_EFL] |= X86_EFLAGS_RF_BIT;
        return;
    }
    release(t, i);   /* and its guard: the access runs now */
    t->stats[STAT_CODE_HITS]++;
    /* The watch it becomes belongs to the epoch now; its address comes
     * from the registers now, so a GC since the sample does not matter. */
    retire_old_watches(t);
    /* Asynchronous: it fired while SIGTRAP was blocked (in wasp's own
     * handler running the same library code), so uc is elsewhere. */
    enum drop_reason r = DROP_SPURIOUS_TRAP;
    if (real)
        r = decode_access_at(pc, uc, &a);
    if (r == DROP_NONE)
        r = unwatchable(t, uc, &a, &waddr, &wlen);
    if (r != DROP_NONE) {
        t->drops[r]++;
        return;
    }
    if (overlaps_armed(t, waddr, wlen)) {
        t->stats[STAT_DECLINED]++;
        return;
    }
    a.fp = fp;   /* decided with the block in view, where decode_access_at sees only the move */
    s->seen = 1;
    watch_access(t, uc, i, &a, waddr, wlen, 1, s->weight, s->rate);
}

/* Slot i, a guard, fired: the sample's pc runs again and the access it
 * guards has not run since the sample. */
static void guard_trap(thread_state *t, const siginfo_t *si, const ucontext_t *uc, int i)
{
    uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    int real = !(perf_sig_flags(si) & WASP_TRAP_PERF_FLAG_ASYNC) && pc == t->watch.slot[i].sample_pc;
    t->drops[real ? skipped(&t->watch.slot[i]) : DROP_SPURIOUS_TRAP]++;
    release(t, i);
}

/* Bytes times a watch's weight, as the pair table's 32-bit sums take them. */
static uint32_t weigh(uint32_t bytes, double weight)
{
    double v = (double)bytes * weight + 0.5;
    return v >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* A pair found by watch s: its bytes count times the watch's weight, the
 * samples it stands for (watch.h), times its region's access rate
 * (access_rate) and times its span (span_of). A watch whose bytes end
 * apart finds several pairs; its sample enters the weight sums once. */
static void record_pair(thread_state *t, const ucontext_t *uc, watch_slot *s, const mem_access *a,
                        const detect_result *d)
{
    uint32_t ctx = capture_context(t, uc, a->pc);
    if (!ctx)
        return;
    double w = s->weight >= 1 ? s->weight : 1, r = w * s->rate * RATE_SCALE, b = r * (s->span ? s->span : 1);
    tables_busy(t, 1);
    int full = pairs_add(&t->pairs, s->ctx, ctx, weigh(d->bytes, b), weigh(d->wasteful, b), weigh(d->approx, b)) < 0;
    tables_busy(t, 0);
    if (full) {
        t->drops[DROP_TABLE_FULL]++;
        return;
    }
    if (s->paired)
        return;
    s->paired = 1;
    t->stats[STAT_WEIGHTED_PAIRS] += (uint64_t)(w + 0.5);
    t->stats[STAT_WEIGHT_SQUARES] += (uint64_t)(w * w + 0.5);
    t->stats[STAT_RATE_WEIGHTS] += (uint64_t)(r + 0.5);
    t->stats[STAT_RATE_WEIGHT_SQUARES] += (uint64_t)(r * r + 0.5);
}

/* Slot i's trap left some of its bytes' pairs open: watch those alone. */
static void keep_watching(thread_state *t, int i, uint8_t ended)
{
    watch_slot *s = &t->watch.slot[i];
    if (ended) {
        s->pending &= (uint8_t)~ended;
        watch_narrow(s);
        t->stats[STAT_TRAPS_PARTIAL]++;
    }
    if (arm(t, i) < 0) {
        free_slot(t, i);
        return;
    }
    t->stats[STAT_KEPT]++;
}

void monitor_trap(thread_state *t, const siginfo_t *si, ucontext_t *uc, int i)
{
    mem_access a;

    t->stats[STAT_TRAPS]++;
    if (i >= t->watch.nslots || !t->watch.slot[i].armed)
        return;  /* a trap that was already queued when the slot was freed */
    watch_slot *s = &t->watch.slot[i];
    if (s->guard) {
        guard_trap(t, si, uc, i);
        return;
    }
    if (s->code) {
        monitor_code_trap(t, si, uc, i);
        return;
    }
    if (s->epoch != __atomic_load_n(&current_epoch, __ATOMIC_ACQUIRE)) {
        t->drops[DROP_EPOCH]++;
        release(t, i);
        return;
    }
    enum drop_reason r = DROP_SPURIOUS_TRAP;
    /* Asynchronous means SIGTRAP was blocked when the access happened: the
     * context we see is not the accessing instruction's. */
    if (!(perf_sig_flags(si) & WASP_TRAP_PERF_FLAG_ASYNC))
        r = locate_access_before(frontend, uc, s->addr, s->addr + s->len, &a);
    /* The decoded instruction must be able to have fired this watch: touch
     * its bytes, and write them when the watch is write-only. */
    uint8_t touched = r == DROP_NONE ? watch_touched(s, a.addr, a.size) : 0;
    if (r == DROP_NONE && (!touched || (opts.mode == MODE_SILENT_STORE && !(a.kind & ACCESS_STORE))))
        r = DROP_SPURIOUS_TRAP;
    if (r != DROP_NONE) {
        t->drops[r]++;
        release(t, i);
        return;
    }
    t->stats[STAT_TRAPS_AT_TARGET] += a.at_target;
    t->stats[STAT_TRAPS_CLOBBERED] += a.clobbered;
    if (s->priming) {
        if (a.pc == s->sample_pc)
            absorb_own_trap(t, i);
        else
            pass_over(t, i);
        return;
    }
    uint64_t now;
    if (disarm_and_read(t, i, &now) < 0)
        return;
    detect_result d = detect_on_trap(opts.mode, s, a.kind, touched, now, opts.fp_tolerance);
    if (d.record)
        record_pair(t, uc, s, &a, &d);
    if (d.keep_watching) {
        keep_watching(t, i, d.ended);
        return;
    }
    free_slot(t, i);
}


/* Every read of program memory goes through the kernel, so a bad address
 * is an error code here, never a SIGSEGV inside our handler: an access
 * about to run may fault on purpose (the JVM's implicit null checks), and
 * an address recomputed from registers can be wrong when code was entered
 * by a path the decoder did not see (a JIT slow path jumping back). One
 * syscall, about a microsecond, against 12-40 us for the signal itself. */
static int perf_io_read(const thread_state *t, uint64_t addr, uint32_t len, uint64_t *v)
{
    *v = 0;
    return memread(t->tid, addr, v, len);
}

static int perf_io_arm(thread_state *t, int i, uint64_t addr, uint32_t len, int rw)
{
    return perf_arm_breakpoint(t->bp_fd[i], &t->bp_attr[i], addr, len, rw);
}

static int perf_io_arm_code(thread_state *t, int i, uint64_t pc)
{
    return perf_arm_code_breakpoint(t->bp_fd[i], &t->bp_attr[i], pc);
}

static void perf_io_disarm(thread_state *t, int i)
{
    perf_disarm_breakpoint(t->bp_fd[i], &t->bp_attr[i]);
}

const monitor_io monitor_perf_io = {
    .arm = perf_io_arm,
    .arm_code = perf_io_arm_code,
    .disarm = perf_io_disarm,
    .read = perf_io_read,
};

void monitor_setup(const wasp_options *o, const engine_frontend *fe, const sampler *s,
                   const monitor_io *world)
{
    opts = *o;
    frontend = fe;
    active_sampler = s;
    io = world;
    sample_want = wanted_access();
}

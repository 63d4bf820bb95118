/*
 * test_monitor.c - the sample -> arm -> trap -> detect -> pair path, driven
 * by synthetic samples and traps: built ucontext_t's over real instruction
 * bytes, a fake set of debug registers (monitor_io), real memory read
 * through the kernel. Runs on every machine, including those whose
 * watchpoints never fire.
 *
 * Each "function" below is the machine code of one or two instructions; a
 * sample or trap puts the pc where the CPU would: a timer sample right after
 * the instruction that retired (or at a loop head, before it), a trap right
 * after the access that fired it, or AT a rep string instruction still
 * running.
 */
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "harness.h"
#include "decode.h"
#include "monitor.h"
#include "perf.h"
#include "thread.h"

/* mov %rax,(%rdx); ret */
static const uint8_t store8[] = { 0x48, 0x89, 0x02, 0xc3 };
/* mov %eax,(%rdx); ret */
static const uint8_t store4[] = { 0x89, 0x02, 0xc3 };
/* mov (%rdx),%rax; ret */
static const uint8_t load8[] = { 0x48, 0x8b, 0x02, 0xc3 };
/* movsd %xmm0,(%rdx); ret */
static const uint8_t store_f64[] = { 0xf2, 0x0f, 0x11, 0x02, 0xc3 };
/* add %rax,(%rdx); ret: reads and writes */
static const uint8_t add8[] = { 0x48, 0x01, 0x02, 0xc3 };
/* rep stosb; ret */
static const uint8_t rep_stosb[] = { 0xf3, 0xaa, 0xc3 };
/* mov %rax,(%rdx); mov %rax,(%rdx); ret: a second function, for contexts */
static const uint8_t store8_again[] = { 0x48, 0x89, 0x02, 0x48, 0x89, 0x02, 0xc3 };
/* mov %rax,(%rdx); mov %rax,0x8(%rdx); ret: two stores to different bytes */
static const uint8_t store8_pair[] = { 0x48, 0x89, 0x02, 0x48, 0x89, 0x42, 0x08, 0xc3 };
/* mov %rax,(%rdx); add $8,%rdx; ret: after the add, the store's address is gone */
static const uint8_t store_advance[] = { 0x48, 0x89, 0x02, 0x48, 0x83, 0xc2, 0x08, 0xc3 };
/* test %rax,%rax; je 2f; mov %rax,(%rdx); nop; 1: nop; ret; nop; 2: jmp 1b: a store a
 * never-taken check may skip (its target is out of line, past the ret, not an if's arm),
 * and a target (1) that out-of-line code jumps back to, as C2's slow paths do */
static const uint8_t store_if[] = { 0x48, 0x85, 0xc0, 0x74, 0x07, 0x48, 0x89, 0x02, 0x90,
                                    0x90, 0xc3, 0x90, 0xeb, 0xfb };
/* test %rax,%rax; je 1f; mov %rax,(%rdx); 1: ret: the store is an if's arm, its traps land at a target */
static const uint8_t store_before_target[] = { 0x48, 0x85, 0xc0, 0x74, 0x03, 0x48, 0x89, 0x02, 0xc3 };
/* 1: mov %rax,(%rdx); dec %rcx; jne 1b; ret: a loop body, one store */
static const uint8_t store_loop[] = { 0x48, 0x89, 0x02, 0x48, 0xff, 0xc9, 0x75, 0xf8, 0xc3 };

static const struct { const uint8_t *code; size_t len; } functions[] = {
    { store8, sizeof store8 }, { store4, sizeof store4 }, { load8, sizeof load8 },
    { store_f64, sizeof store_f64 }, { add8, sizeof add8 }, { rep_stosb, sizeof rep_stosb },
    { store8_again, sizeof store8_again }, { store_advance, sizeof store_advance },
    { store_if, sizeof store_if }, { store8_pair, sizeof store8_pair },
    { store_before_target, sizeof store_before_target }, { store_loop, sizeof store_loop },
};

static uint64_t data[16] __attribute__((aligned(64)));

static uint64_t at(const uint8_t *code, size_t off)
{
    return (uint64_t)(uintptr_t)code + off;
}

/* ---- a front end over the functions above ---- */

static int fake_bounds(const ucontext_t *uc, code_bounds *out)
{
    uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++) {
        uint64_t lo = at(functions[i].code, 0);
        if (pc >= lo && pc <= lo + functions[i].len) {
            *out = (code_bounds){ .start = lo, .end = lo + functions[i].len };
            return 0;
        }
    }
    return -1;
}

static int fake_walk(void *thread_data, const ucontext_t *uc, uint64_t leaf_pc, frame_key *out, int max)
{
    (void)thread_data;
    (void)uc;
    if (max < 1)
        return -1;
    out[0] = (frame_key){ leaf_pc, FRAME_NATIVE };
    return 1;
}

static const engine_frontend fake_frontend = {
    .name = "test",
    .stack_default = STACK_INCLUDE,
    .bounds = fake_bounds,
    .walk = fake_walk,
};

/* ---- fake debug registers; real reads ---- */

static struct {
    int armed;
    int code;    /* an execute breakpoint at addr */
    uint64_t addr;
    uint32_t len;
    int rw;
} slot_hw[4];

static int fake_arm(thread_state *t, int i, uint64_t addr, uint32_t len, int rw)
{
    (void)t;
    slot_hw[i].armed = 1;
    slot_hw[i].code = 0;
    slot_hw[i].addr = addr;
    slot_hw[i].len = len;
    slot_hw[i].rw = rw;
    return 0;
}

static int fake_arm_code(thread_state *t, int i, uint64_t pc)
{
    (void)t;
    slot_hw[i].armed = 1;
    slot_hw[i].code = 1;
    slot_hw[i].addr = pc;
    return 0;
}

static void fake_disarm(thread_state *t, int i)
{
    (void)t;
    slot_hw[i].armed = 0;
}

static int real_read(const thread_state *t, uint64_t addr, uint32_t len, uint64_t *v)
{
    return monitor_perf_io.read(t, addr, len, v);
}

static const monitor_io fake_io = { fake_arm, fake_arm_code, fake_disarm, real_read };

/* ---- one thread, fresh for each test ---- */

static thread_state *thread_begin(enum wasp_mode mode, int slots)
{
    wasp_options o;
    options_defaults(&o);
    o.mode = mode;
    o.slots = slots;
    o.stack = STACK_INCLUDE;
    monitor_setup(&o, &fake_frontend, &sampler_software, &fake_io);
    thread_state *t = calloc(1, sizeof *t);
    t->magic = THREAD_MAGIC;
    t->tid = (pid_t)syscall(SYS_gettid);
    watch_init(&t->watch, slots, 12345);
    if (cct_init(&t->contexts, 1024) < 0 || pairs_init(&t->pairs, 256) < 0)
        abort();
    memset(slot_hw, 0, sizeof slot_hw);
    memset(data, 0, sizeof data);
    return t;
}

static void thread_end(thread_state *t)
{
    pairs_destroy(&t->pairs);
    cct_destroy(&t->contexts);
    free(t);
}

static ucontext_t context(uint64_t pc, void *rdx, uint64_t rax)
{
    ucontext_t uc;
    memset(&uc, 0, sizeof uc);
    uc.uc_mcontext.gregs[REG_RIP] = (greg_t)pc;
    uc.uc_mcontext.gregs[REG_RDX] = (greg_t)(uintptr_t)rdx;
    uc.uc_mcontext.gregs[REG_RAX] = (greg_t)rax;
    uc.uc_mcontext.gregs[REG_RSP] = (greg_t)(uintptr_t)&uc;
    uc.uc_mcontext.fpregs = NULL;
    return uc;
}

static siginfo_t sync_info(void)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = SIGTRAP;
    si.si_code = TRAP_PERF;
    return si;
}

static greg_t sample_flags(thread_state *t, uint64_t pc, void *rdx, uint64_t rax)
{
    ucontext_t uc = context(pc, rdx, rax);
    siginfo_t si = sync_info();
    monitor_sample(t, &si, &uc, 0);
    return uc.uc_mcontext.gregs[REG_EFL];
}

static void sample(thread_state *t, uint64_t pc, void *rdx, uint64_t rax)
{
    sample_flags(t, pc, rdx, rax);
}

static void trap(thread_state *t, int slot, uint64_t pc, void *rdx, uint64_t rax)
{
    ucontext_t uc = context(pc, rdx, rax);
    siginfo_t si = sync_info();
    monitor_trap(t, &si, &uc, slot);
}

static const pair_entry *only_pair(const thread_state *t)
{
    return t->pairs.used == 1 ? &t->pairs.entries[0] : NULL;
}

/* A pair's bytes as monitor.c counts them: times 64 x the accesses per
 * instruction of the region its sample drew from (each function above is
 * one region with one access of a kind: 1 of n instructions). */
static uint32_t counted(uint32_t bytes, unsigned insns)
{
    return (uint32_t)((double)bytes * 64.0 / insns + 0.5);
}

/* ---- tests ---- */

TEST(a_sample_arms_a_write_watch_on_the_store_behind_the_pc)
{
    thread_state *t = thread_begin(MODE_SILENT_STORE, 4);
    data[2] = 7;
    sample(t, at(store8, 3), &data[2], 7);
    CHECK_EQ_U(t->stats[STAT_SAMPLES], 1);
    CHECK_EQ_U(t->stats[STAT_ARMED], 1);
    CHECK(slot_hw[0].armed && slot_hw[0].addr == (uint64_t)(uintptr_t)&data[2]);
    CHECK_EQ_U(slot_hw[0].len, 8);
    CHECK_EQ_U(slot_hw[0].rw, 0);   /* silent stores need only writes */
    CHECK(t->watch.slot[0].armed && !t->watch.slot[0].priming && t->watch.slot[0].value == 7);
    thread_end(t);
}

TEST(the_same_value_stored_again_is_a_silent_pair)
{
    thread_state *t = thread_begin(MODE_SILENT_STORE, 4);
    data[0] = 7;
    sample(t, at(store8, 3), &data[0], 7);
    trap(t, 0, at(store8_again, 3), &data[0], 7);   /* memory still 7 */
    const pair_entry *p = only_pair(t);
    CHECK(p && p->count == 1 && p->bytes == counted(8, 2) && p->wasteful == p->bytes && p->approx == 0);
    CHECK(p && p->watch_ctx != p->trap_ctx);          /* two different pcs, two contexts */
    CHECK(!slot_hw[0].armed && !t->watch.slot[0].armed);  /* the trap ends the watch */
    CHECK_EQ_U(t->stats[STAT_TRAPS], 1);
    thread_end(t);
}

TEST(a_different_value_is_monitored_not_wasteful)
{
    thread_state *t = thread_begin(MODE_SILENT_STORE, 4);
    data[0] = 7;
    sample(t, at(store8, 3), &data[0], 7);
    data[0] = 8;
    trap(t, 0, at(store8, 3), &data[0], 8);
    const pair_entry *p = only_pair(t);
    CHECK(p && p->bytes == counted(8, 2) && p->wasteful == 0);
    thread_end(t);
}

TEST(an_access_ahead_of_the_pc_is_primed_and_its_own_trap_absorbed)
{
    thread_state *t = thread_begin(MODE_SILENT_STORE, 4);
    data[0] = 1;
    sample(t, at(store8, 0), &data[0], 5);   /* at the loop head: the store has not run */
    CHECK(t->watch.slot[0].armed && t->watch.slot[0].priming);
    CHECK(slot_hw[0].armed);
    data[0] = 5;                              /* the sampled store runs and traps */
    trap(t, 0, at(store8, 3), &data[0], 5);
    CHECK_EQ_U(t->stats[STAT_PRIMED], 1);
    CHECK_EQ_U(t->pairs.used, 0);             /* no pair with itself */
    CHECK(t->watch.slot[0].armed && !t->watch.slot[0].priming && t->watch.slot[0].value == 5);
    CHECK(slot_hw[0].armed);                  /* still watching, from the value it left */
    trap(t, 0, at(store8, 3), &data[0], 5);   /* the next round stores 5 again */
    const pair_entry *p = only_pair(t);
    CHECK(p && p->wasteful == counted(8, 2));
    thread_end(t);
}

/* The store's traps land at a branch target: a jump there touches no
 * data, so they are the store's (locate.c), its own and the next round's. */
TEST(a_store_that_ends_an_if_arm_is_paired_through_traps_at_the_target)
{
    thread_state *t = thread_begin(MODE_SILENT_STORE, 4);
    data[0] = 1;
    sample(t, at(store_before_target, 5), &data[0], 5);   /* the store is next: the arm's region */
    CHECK(t->watch.slot[0].armed && t->watch.slot[0].priming);
    data[0] = 5;
    trap(t, 0, at(store_before_target, 8), &data[0], 5);   /* its own trap, at the target */
    CHECK_EQ_U(t->stats[STAT_PRIMED], 1);
    trap(t, 0, at(store_before_target, 8), &data[0], 5);   /* the next round's: silent */
    const pair_entry *p = only_pair(t);
    CHECK(p && p->wasteful == counted(8, 1));   /* the arm alone: one access in one instruction */
    CHECK_EQ_U(t->stats[STAT_TRAPS_AT_TARGET], 2);
    CHECK_EQ_U(t->drops[DROP_BRANCH_TARGET], 0);
    thread_end(t);
}

/* Another instruction touches the bytes before the access drawn ahead of
 * the pc runs: no pair (the drawn access has not run), and the watch
 * still waits for it. */
TEST(an_access_ahead_passes_over_earlier_accesses_to_its_bytes)
{
    thread_state *t = thread_begin(MODE_SILENT_STORE, 4);
    data[0] = 1;
    sample(t, at(store8, 0), &data[0], 5);         /* primed on store8's store */
    trap(t, 0, at(store8_again, 3), &data[0], 1);  /* another store first */
    CHECK_EQ_U(t->pairs.used, 0);
    CHECK_EQ_U(t->stats[STAT_KEPT], 1);
    CHECK(t->watch.slot[0].armed && t->watch.slot[0].priming && slot_hw[0].armed);
    data[0] = 5;
    trap(t, 0, at(store8, 3), &data[0], 5);        /* the drawn store: absorbed */
    CHECK_EQ_U(t->stats[STAT_PRIMED], 1);
    trap(t, 0, at(store8, 3), &data[0], 5);        /* 5 again */
    const pair_entry *p = only_pair(t);
    CHECK(p && p->wasteful == counted(8, 2));
    thread_end(t);
}

#define EFLAGS_RF (1 << 16)

/* The sample lands before "je": the store after it may not run on this
 * pass. A guard (a code breakpoint at the pc) ends the pass; the pc itself
 * leaves the handler with the resume flag, past its own guard. */
TEST(an_access_past_a_branch_is_guarded_and_dropped_if_the_pc_comes_first)
{
    thread_state *t = thread_begin(MODE_SILENT_STORE, 4);
    data[0] = 1;
    greg_t flags = sample_flags(t, at(store_if, 0), &data[0], 5);
    CHECK_EQ_U(t->stats[STAT_GUARDS], 1);
    CHECK(flags & EFLAGS_RF);
    CHECK(t->watch.slot[0].armed && t->watch.slot[0].priming);
    CHECK(t->watch.slot[1].armed && t->watch.slot[1].guard);
    CHECK(slot_hw[1].armed && slot_hw[1].code && slot_hw[1].addr == at(store_if, 0));
    trap(t, 1, at(store_if, 0), &data[0], 5);   /* the next pass: je skipped the store */
    CHECK_EQ_U(t->drops[DROP_SKIPPED_AHEAD], 1);
    CHECK(!t->watch.slot[0].armed && !slot_hw[0].armed);
    CHECK(!t->watch.slot[1].armed && !slot_hw[1].armed);
    CHECK_EQ_U(t->pairs.used, 0);
    thread_end(t);
}

TEST(a_guarded_access_that_runs_first_loses_its_guard_and_pairs)
{
    thread_state *t = thread_begin(MODE_SILENT_STORE, 4);
    data[0] = 1;
    sample(t, at(store_if, 0), &data[0], 5);
    trap(t, 0, at(store_if, 8), &data[0], 5);   /* the store ran on this pass */
    CHECK_EQ_U(t->stats[STAT_PRIMED], 1);
    CHECK(!t->watch.slot[1].armed && !slot_hw[1].armed);
    CHECK(t->watch.slot[0].armed && t->watch.slot[0].partner == 0);
    trap(t, 0, at(store8, 3), &data[0], 5);     /* 5 stored again */
    const pair_entry *p = only_pair(t);
    CHECK(p && p->wasteful == counted(8, 6));
    thread_end(t);
}

/* Accesses the pc runs into unconditionally need no guard; a guard needs
 * a second free slot, and without one the sample is not monitored. */
TEST(only_accesses_past_a_branch_are_guarded_and_a_guard_needs_a_free_slot)
{
    thread_state *t = thread_begin(MODE_SILENT_STORE, 1);
    greg_t flags = sample_flags(t, at(store8, 0), &data[0], 5);
    CHECK(!(flags & EFLAGS_RF));
    CHECK_EQ_U(t->stats[STAT_GUARDS], 0);
    CHECK_EQ_U(t->stats[STAT_ARMED], 1);
    thread_end(t);
    t = thread_begin(MODE_SILENT_STORE, 1);
    sample(t, at(store_if, 0), &data[0], 5);
    CHECK_EQ_U(t->stats[STAT_GUARD_DECLINED], 1);
    CHECK_EQ_U(t->stats[STAT_ARMED], 0);
    CHECK(!slot_hw[0].armed);
    thread_end(t);
}

/* A pass through a region is far shorter than a sampling interval: a
 * guard still armed at the next sample means the region was left without
 * its access running. */
TEST(a_guard_still_armed_at_the_next_sample_ends_its_access)
{
    thread_state *t = thread_begin(MODE_SILENT_STORE, 4);
    sample(t, at(store_if, 0), &data[0], 5);     /* slot 0 and its guard */
    CHECK(t->watch.slot[1].guard);
    sample(t, at(store8, 3), &data[2], 7);
    CHECK_EQ_U(t->drops[DROP_SKIPPED_AHEAD], 1);
    CHECK(t->watch.slot[0].armed && t->watch.slot[0].sample_pc == at(store8, 0));
    for (int i = 1; i < 4; i++)
        CHECK(!t->watch.slot[i].armed && !slot_hw[i].armed);
    thread_end(t);
}

/* The sample lands at the je's target: the store behind it may have been
 * jumped over on this pass, so a code breakpoint takes it at its next run
 * and a guard at the pc drops the sample if the pc runs again first. */
TEST(an_access_behind_a_branch_target_is_taken_at_its_next_run_and_guarded)
{
    thread_state *t = thread_begin(MODE_SILENT_STORE, 4);
    greg_t flags = sample_flags(t, at(store_if, 9), &data[0], 5);
    CHECK_EQ_U(t->stats[STAT_CODE_BREAKS], 1);
    CHECK_EQ_U(t->stats[STAT_PAST_TARGET], 1);
    CHECK_EQ_U(t->stats[STAT_GUARDS], 1);
    CHECK(flags & EFLAGS_RF);
    CHECK(slot_hw[0].armed && slot_hw[0].code && slot_hw[0].addr == at(store_if, 5));
    CHECK(slot_hw[1].armed && slot_hw[1].code && slot_hw[1].addr == at(store_if, 9));
    trap(t, 1, at(store_if, 9), &data[0], 5);   /* the next pass jumped past it too */
    CHECK_EQ_U(t->drops[DROP_SKIPPED_BEHIND], 1);
    CHECK_EQ_U(t->drops[DROP_SKIPPED_AHEAD], 0);
    CHECK(!slot_hw[0].armed && !slot_hw[1].armed && !t->watch.slot[0].armed);
    /* Once more; this time the store runs first and pairs. */
    data[0] = 5;
    sample(t, at(store_if, 9), &data[0], 5);
    trap(t, 0, at(store_if, 5), &data[0], 5);   /* the code breakpoint, before the store */
    CHECK_EQ_U(t->stats[STAT_CODE_HITS], 1);
    CHECK(!t->watch.slot[1].armed && !slot_hw[1].armed);
    trap(t, 0, at(store_if, 8), &data[0], 5);   /* the store itself: absorbed */
    trap(t, 0, at(store8, 3), &data[0], 5);     /* 5 stored again */
    const pair_entry *p = only_pair(t);
    CHECK(p && p->wasteful == counted(8, 6));
    CHECK_EQ_U(t->drops[DROP_SKIPPED_BEHIND], 1);
    thread_end(t);
}

/* Watches leave one slot free for a guard, so an access past a branch is
 * never declined for want of one (that would bias against it). */
TEST(watches_leave_a_slot_for_the_guard)
{
    thread_state *t = thread_begin(MODE_SILENT_STORE, 2);
    sample(t, at(store8, 3), &data[2], 7);
    for (int k = 0; k < 16; k++)
        sample(t, at(store8, 3), &data[4 + k % 4], 7);
    CHECK(t->watch.slot[0].armed && !t->watch.slot[1].armed);
    for (int k = 0; k < 64 && !t->stats[STAT_GUARDS]; k++)
        sample(t, at(store_if, 0), &data[0], 5);
    CHECK(t->stats[STAT_GUARDS] >= 1);
    CHECK_EQ_U(t->stats[STAT_GUARD_DECLINED], 0);
    thread_end(t);
}


/* The sample lands after "add $8,%rdx": the store's address is no longer
 * in the registers, so a code breakpoint stops the next pass just before
 * the store, where they give it; from there it is a primed watch. */
TEST(an_access_the_registers_lost_is_taken_by_a_code_breakpoint)
{
    thread_state *t = thread_begin(MODE_SILENT_STORE, 4);
    data[1] = 3;
    sample(t, at(store_advance, 7), &data[2], 3);
    CHECK_EQ_U(t->stats[STAT_CODE_BREAKS], 1);
    CHECK_EQ_U(t->stats[STAT_ARMED], 0);
    CHECK(slot_hw[0].armed && slot_hw[0].code && slot_hw[0].addr == at(store_advance, 0));
    CHECK(t->watch.slot[0].armed && t->watch.slot[0].code);
    trap(t, 0, at(store_advance, 0), &data[1], 3);   /* the next pass, before the store */
    CHECK_EQ_U(t->stats[STAT_CODE_HITS], 1);
    CHECK_EQ_U(t->stats[STAT_ARMED], 1);
    CHECK(slot_hw[0].armed && !slot_hw[0].code && slot_hw[0].addr == (uint64_t)(uintptr_t)&data[1]);
    CHECK(t->watch.slot[0].priming && !t->watch.slot[0].code);
    trap(t, 0, at(store_advance, 3), &data[1], 3);   /* the store itself: absorbed */
    CHECK_EQ_U(t->stats[STAT_PRIMED], 1);
    trap(t, 0, at(store8, 3), &data[1], 3);          /* 3 stored again */
    const pair_entry *p = only_pair(t);
    CHECK(p && p->wasteful == counted(8, 3));
    thread_end(t);
}

/* In a loop body, half the samples take the drawn store's run on the next
 * pass: one behind the pc through a code breakpoint at its next run, one
 * ahead of it (not run yet on this pass) letting this pass's run by first. */
TEST(a_loop_sample_takes_this_pass_or_the_next_alike)
{
    unsigned next = 0, n = 64;
    for (unsigned seed = 1; seed <= n; seed++) {
        thread_state *t = thread_begin(MODE_SILENT_STORE, 4);
        watch_init(&t->watch, 4, seed * 7919);
        sample(t, at(store_loop, 3), &data[1], 3);   /* behind the pc */
        if (t->stats[STAT_NEXT_PASS]) {
            next++;
            CHECK(slot_hw[0].armed && slot_hw[0].code && slot_hw[0].addr == at(store_loop, 0));
            CHECK_EQ_U(t->watch.slot[0].skip_runs, 0);
        } else {
            CHECK(slot_hw[0].armed && !slot_hw[0].code && slot_hw[0].addr == (uint64_t)(uintptr_t)&data[1]);
        }
        thread_end(t);
    }
    CHECK(next >= n / 4 && next <= 3 * n / 4);
    for (unsigned seed = 1;; seed++) {
        thread_state *t = thread_begin(MODE_SILENT_STORE, 4);
        watch_init(&t->watch, 4, seed * 7919);
        data[1] = 3;
        sample(t, at(store_loop, 0), &data[1], 3);   /* ahead: this pass's run is next */
        if (!t->stats[STAT_NEXT_PASS]) {
            thread_end(t);
            continue;
        }
        CHECK_EQ_U(t->watch.slot[0].skip_runs, 1);
        ucontext_t uc = context(at(store_loop, 0), &data[1], 3);
        siginfo_t si = sync_info();
        monitor_trap(t, &si, &uc, 0);                /* this pass: let by */
        CHECK(uc.uc_mcontext.gregs[REG_EFL] & (1u << 16));
        CHECK_EQ_U(t->stats[STAT_CODE_HITS], 0);
        CHECK(slot_hw[0].armed && slot_hw[0].code);
        trap(t, 0, at(store_loop, 0), &data[2], 3);   /* the next pass: taken */
        CHECK_EQ_U(t->stats[STAT_CODE_HITS], 1);
        CHECK(slot_hw[0].armed && !slot_hw[0].code && slot_hw[0].addr == (uint64_t)(uintptr_t)&data[2]);
        thread_end(t);
        break;
    }
}

TEST(a_code_breakpoint_that_stops_elsewhere_is_spurious)
{
    thread_state *t = thread_begin(MODE_SILENT_STORE, 4);
    sample(t, at(store_advance, 7), &data[2], 3);
    trap(t, 0, at(store_advance, 3), &data[1], 3);   /* not the breakpoint's pc */
    CHECK_EQ_U(t->drops[DROP_SPURIOUS_TRAP], 1);
    CHECK(!slot_hw[0].armed && !t->watch.slot[0].armed);
    /* Fired while wasp's own handler ran the same code (SIGTRAP blocked). */
    sample(t, at(store_advance, 7), &data[2], 3);
    ucontext_t uc = context(at(store_advance, 0), &data[1], 3);
    siginfo_t si = sync_info();
    uint32_t async = WASP_TRAP_PERF_FLAG_ASYNC;
    memcpy((char *)&si + 36, &async, sizeof async);
    monitor_trap(t, &si, &uc, 0);
    CHECK_EQ_U(t->drops[DROP_SPURIOUS_TRAP], 2);
    CHECK_EQ_U(t->stats[STAT_ARMED], 0);
    thread_end(t);
}

/* A sample whose period ended inside wasp's previous handler is delivered
 * at the pc that handler returned to (a trap's access): not a pc the
 * timer chose, so it is counted and dropped, and arms nothing. */
TEST(a_sample_due_inside_a_handler_is_dropped)
{
    thread_state *t = thread_begin(MODE_SILENT_STORE, 4);
    ucontext_t uc = context(at(store8, 0), &data[0], 5);
    siginfo_t si = sync_info();
    monitor_sample(t, &si, &uc, 1);
    CHECK_EQ_U(t->stats[STAT_SAMPLES], 1);
    CHECK_EQ_U(t->drops[DROP_IN_HANDLER], 1);
    CHECK_EQ_U(t->stats[STAT_ARMED], 0);
    CHECK(!slot_hw[0].armed && !t->watch.slot[0].armed);
    sample(t, at(store8, 0), &data[0], 5);   /* the next one is taken */
    CHECK_EQ_U(t->stats[STAT_ARMED], 1);
    thread_end(t);
}

/* A sample lands by time; its pair counts its bytes times its region's
 * accesses per instruction, so that a region dense in stores is not
 * outweighed by one that spends as long on other instructions. */
TEST(a_pair_counts_its_region_accesses_per_instruction)
{
    thread_state *t = thread_begin(MODE_DEAD_STORE, 4);
    sample(t, at(store8_pair, 7), &data[0], 1);    /* 2 stores of 3 instructions */
    trap(t, 0, at(store8, 3), (void *)(uintptr_t)slot_hw[0].addr, 1);   /* whichever was drawn */
    sample(t, at(store_advance, 3), &data[1], 1);  /* 1 store of 3: its base not moved yet */
    trap(t, 0, at(store8, 3), &data[1], 1);
    CHECK_EQ_U(t->pairs.used, 2);
    CHECK(t->pairs.used == 2 && t->pairs.entries[0].bytes == counted(16, 3) &&
          t->pairs.entries[1].bytes == counted(8, 3));
    CHECK_EQ_U(t->stats[STAT_WEIGHTED_PAIRS], 2);                      /* samples */
    CHECK_EQ_U(t->stats[STAT_RATE_WEIGHTS], counted(2, 3) + counted(1, 3));  /* 43 + 21 */
    thread_end(t);
}

/* Object zeroing, then a 4-byte field store: the store ends the pairs of
 * the 4 bytes it overwrote; the other 4 stay watched, alone, until their
 * own next access (here a load: live). One sample, two pairs. */
TEST(a_narrower_store_ends_only_the_bytes_it_overwrites_and_the_rest_stay_watched)
{
    thread_state *t = thread_begin(MODE_DEAD_STORE, 4);
    sample(t, at(store8, 3), &data[0], 1);
    CHECK_EQ_U(slot_hw[0].rw, 1);   /* dead stores must see reads */
    trap(t, 0, at(store4, 2), &data[0], 2);
    const pair_entry *p = only_pair(t);
    CHECK(p && p->bytes == counted(4, 2) && p->wasteful == counted(4, 2));
    CHECK(slot_hw[0].armed && slot_hw[0].addr == (uint64_t)(uintptr_t)&data[0] + 4 && slot_hw[0].len == 4);
    CHECK_EQ_U(t->stats[STAT_TRAPS_PARTIAL], 1);
    trap(t, 0, at(load8, 3), &data[0], 0);
    CHECK_EQ_U(t->pairs.used, 2);
    CHECK(t->pairs.used == 2 && t->pairs.entries[1].bytes == counted(4, 2) && t->pairs.entries[1].wasteful == 0);
    CHECK(!slot_hw[0].armed && !t->watch.slot[0].armed);
    CHECK_EQ_U(t->stats[STAT_WEIGHTED_PAIRS], 1);   /* one sample */
    thread_end(t);
}

TEST(a_load_makes_the_store_useful_and_a_read_modify_write_too)
{
    thread_state *t = thread_begin(MODE_DEAD_STORE, 4);
    sample(t, at(store8, 3), &data[0], 1);
    trap(t, 0, at(load8, 3), &data[0], 1);
    const pair_entry *p = only_pair(t);
    CHECK(p && p->bytes == counted(8, 2) && p->wasteful == 0);
    sample(t, at(store8, 3), &data[1], 1);
    trap(t, 0, at(add8, 3), &data[1], 1);
    CHECK_EQ_U(t->pairs.used, 2);
    CHECK(t->pairs.used == 2 && t->pairs.entries[1].wasteful == 0);
    thread_end(t);
}

TEST(silent_load_keeps_watching_across_stores)
{
    thread_state *t = thread_begin(MODE_SILENT_LOAD, 4);
    data[3] = 42;
    sample(t, at(load8, 3), &data[3], 42);
    CHECK(slot_hw[0].armed && slot_hw[0].rw == 1);
    trap(t, 0, at(store8, 3), &data[3], 42);   /* a store between two loads */
    CHECK_EQ_U(t->stats[STAT_KEPT], 1);
    CHECK_EQ_U(t->pairs.used, 0);
    CHECK(slot_hw[0].armed);
    trap(t, 0, at(load8, 3), &data[3], 42);    /* the next load gets the same value */
    const pair_entry *p = only_pair(t);
    CHECK(p && p->wasteful == counted(8, 2));
    thread_end(t);
}

TEST(nearly_equal_doubles_are_approximately_silent)
{
    thread_state *t = thread_begin(MODE_SILENT_STORE, 4);
    double x = 1.0, y = 1.0 + 1e-9;
    memcpy(&data[0], &x, 8);
    sample(t, at(store_f64, 4), &data[0], 0);
    CHECK(t->watch.slot[0].armed);
    memcpy(&data[0], &y, 8);
    trap(t, 0, at(store_f64, 4), &data[0], 0);
    const pair_entry *p = only_pair(t);
    CHECK(p && p->wasteful == 0 && p->approx == counted(8, 2));
    thread_end(t);
}

TEST(a_new_epoch_retires_watches_unpaired)
{
    thread_state *t = thread_begin(MODE_SILENT_STORE, 4);
    sample(t, at(store8, 3), &data[0], 0);
    CHECK(t->watch.slot[0].armed);
    monitor_new_epoch();                       /* a GC moved objects */
    trap(t, 0, at(store8, 3), &data[0], 0);
    CHECK_EQ_U(t->drops[DROP_EPOCH], 1);
    CHECK_EQ_U(t->pairs.used, 0);
    CHECK(!t->watch.slot[0].armed && !slot_hw[0].armed);
    /* A sample after the epoch arms again (in the new epoch) ... */
    sample(t, at(store8, 3), &data[1], 0);
    CHECK(t->watch.slot[0].armed);
    /* ... and one more epoch retires it at the next sample. */
    monitor_new_epoch();
    sample(t, at(store8, 3), &data[2], 0);
    CHECK_EQ_U(t->drops[DROP_EPOCH], 2);
    thread_end(t);
}

/* Three slots: two for watches, one kept for a guard. */
TEST(full_slots_are_replaced_as_a_reservoir)
{
    thread_state *t = thread_begin(MODE_SILENT_STORE, 3);
    for (int i = 0; i < 16; i++)
        sample(t, at(store8, 3), &data[i], 0);
    CHECK_EQ_U(t->stats[STAT_SAMPLES], 16);
    CHECK_EQ_U(t->stats[STAT_ARMED] + t->stats[STAT_DECLINED], 16);
    CHECK(t->stats[STAT_REPLACED] > 0);   /* slots were taken over ... */
    CHECK(t->stats[STAT_DECLINED] > 0);   /* ... and some samples turned away */
    CHECK_EQ_U(t->stats[STAT_ARMED], 2 + t->stats[STAT_REPLACED]);
    /* Each armed slot's register watches what its slot says. */
    for (int i = 0; i < 2; i++)
        CHECK(slot_hw[i].armed && slot_hw[i].addr == t->watch.slot[i].addr);
    CHECK(!slot_hw[2].armed);
    thread_end(t);
}

TEST(bytes_already_watched_are_not_watched_twice)
{
    thread_state *t = thread_begin(MODE_SILENT_STORE, 4);
    sample(t, at(store8, 3), &data[0], 0);
    sample(t, at(store4, 2), &data[0], 0);
    CHECK_EQ_U(t->stats[STAT_ARMED], 1);
    CHECK_EQ_U(t->stats[STAT_DECLINED], 1);
    CHECK(!slot_hw[1].armed);
    thread_end(t);
}

TEST(a_trap_by_an_access_elsewhere_is_spurious)
{
    thread_state *t = thread_begin(MODE_SILENT_STORE, 4);
    sample(t, at(store8, 3), &data[0], 0);
    trap(t, 0, at(store8, 3), &data[8], 0);    /* the instruction wrote other bytes */
    CHECK_EQ_U(t->drops[DROP_SPURIOUS_TRAP], 1);
    CHECK(!t->watch.slot[0].armed && !slot_hw[0].armed);
    sample(t, at(store8, 3), &data[1], 0);
    trap(t, 0, at(load8, 3), &data[1], 0);     /* a load cannot fire a write watch */
    CHECK_EQ_U(t->drops[DROP_SPURIOUS_TRAP], 2);
    CHECK_EQ_U(t->pairs.used, 0);
    thread_end(t);
}

TEST(an_asynchronous_trap_is_not_decoded)
{
    thread_state *t = thread_begin(MODE_SILENT_STORE, 4);
    sample(t, at(store8, 3), &data[0], 0);
    ucontext_t uc = context(at(store8, 3), &data[0], 0);
    siginfo_t si = sync_info();
    uint32_t async = WASP_TRAP_PERF_FLAG_ASYNC;
    memcpy((char *)&si + 36, &async, sizeof async);   /* where the kernel puts perf flags */
    monitor_trap(t, &si, &uc, 0);
    CHECK_EQ_U(t->drops[DROP_SPURIOUS_TRAP], 1);
    CHECK_EQ_U(t->pairs.used, 0);
    thread_end(t);
}

TEST(an_unreadable_address_is_dropped_not_read)
{
    thread_state *t = thread_begin(MODE_SILENT_STORE, 4);
    sample(t, at(store8, 3), (void *)(uintptr_t)0x1000, 0);   /* page 1 is never mapped */
    CHECK_EQ_U(t->drops[DROP_UNREADABLE], 1);
    CHECK_EQ_U(t->stats[STAT_ARMED], 0);
    CHECK(!slot_hw[0].armed);
    thread_end(t);
}

TEST(a_trap_on_a_freed_slot_is_counted_and_ignored)
{
    thread_state *t = thread_begin(MODE_SILENT_STORE, 4);
    trap(t, 2, at(store8, 3), &data[0], 0);
    trap(t, 7, at(store8, 3), &data[0], 0);    /* not even a slot */
    CHECK_EQ_U(t->stats[STAT_TRAPS], 2);
    CHECK_EQ_U(t->pairs.used, 0);
    thread_end(t);
}

/* memset's rep stosb, sampled while it runs (pc AT the instruction, rdi
 * the next byte, rcx the bytes left): the watch covers the element ahead
 * but waits on its last byte, so the fill costs one trap, not one per byte. */
TEST(a_sampled_rep_stos_watches_its_last_byte_until_it_passes)
{
    thread_state *t = thread_begin(MODE_DEAD_STORE, 4);
    uint8_t *bytes = (uint8_t *)&data[4];
    ucontext_t uc = context(at(rep_stosb, 0), NULL, 0);
    uc.uc_mcontext.gregs[REG_RDI] = (greg_t)(uintptr_t)bytes;
    uc.uc_mcontext.gregs[REG_RCX] = 64;
    siginfo_t si = sync_info();
    monitor_sample(t, &si, &uc, 0);
    CHECK_EQ_U(t->stats[STAT_ARMED], 1);
    const watch_slot *w = &t->watch.slot[0];
    CHECK(w->armed && w->string && w->priming);
    CHECK(slot_hw[0].armed && slot_hw[0].len == 1 && slot_hw[0].addr == w->addr + w->len - 1);
    /* The fill reaches the last byte and traps, still inside the rep. */
    memset(bytes, 0, w->len);
    uc.uc_mcontext.gregs[REG_RDI] = (greg_t)(w->addr + w->len);
    uc.uc_mcontext.gregs[REG_RCX] = (greg_t)(64 - w->len - (w->addr - (uint64_t)(uintptr_t)bytes));
    monitor_trap(t, &si, &uc, 0);
    CHECK_EQ_U(t->stats[STAT_PRIMED], 1);
    CHECK(slot_hw[0].armed && slot_hw[0].len == w->len && slot_hw[0].addr == w->addr);
    /* A later store over the whole element kills it. */
    trap(t, 0, at(store8, 3), (void *)(uintptr_t)w->addr, 9);
    const pair_entry *p = only_pair(t);
    /* The watch covered w->len one-byte elements; the sample stands for one
     * (a rep is a region of its own: one access per step). */
    CHECK(p && p->bytes == counted(1, 1) && p->wasteful == p->bytes);
    thread_end(t);
}

int main(void)
{
    if (decode_init() != 0) {
        printf("decode_init failed\n");
        return 1;
    }
    RUN(a_sample_arms_a_write_watch_on_the_store_behind_the_pc);
    RUN(the_same_value_stored_again_is_a_silent_pair);
    RUN(a_different_value_is_monitored_not_wasteful);
    RUN(an_access_ahead_of_the_pc_is_primed_and_its_own_trap_absorbed);
    RUN(a_store_that_ends_an_if_arm_is_paired_through_traps_at_the_target);
    RUN(an_access_ahead_passes_over_earlier_accesses_to_its_bytes);
    RUN(an_access_past_a_branch_is_guarded_and_dropped_if_the_pc_comes_first);
    RUN(a_guarded_access_that_runs_first_loses_its_guard_and_pairs);
    RUN(only_accesses_past_a_branch_are_guarded_and_a_guard_needs_a_free_slot);
    RUN(a_guard_still_armed_at_the_next_sample_ends_its_access);
    RUN(an_access_behind_a_branch_target_is_taken_at_its_next_run_and_guarded);
    RUN(watches_leave_a_slot_for_the_guard);
    RUN(a_pair_counts_its_region_accesses_per_instruction);
    RUN(a_sample_due_inside_a_handler_is_dropped);
    RUN(a_narrower_store_ends_only_the_bytes_it_overwrites_and_the_rest_stay_watched);
    RUN(a_load_makes_the_store_useful_and_a_read_modify_write_too);
    RUN(silent_load_keeps_watching_across_stores);
    RUN(nearly_equal_doubles_are_approximately_silent);
    RUN(a_new_epoch_retires_watches_unpaired);
    RUN(full_slots_are_replaced_as_a_reservoir);
    RUN(bytes_already_watched_are_not_watched_twice);
    RUN(a_trap_by_an_access_elsewhere_is_spurious);
    RUN(an_asynchronous_trap_is_not_decoded);
    RUN(an_unreadable_address_is_dropped_not_read);
    RUN(a_trap_on_a_freed_slot_is_counted_and_ignored);
    RUN(a_sampled_rep_stos_watches_its_last_byte_until_it_passes);
    RUN(an_access_the_registers_lost_is_taken_by_a_code_breakpoint);
    RUN(a_loop_sample_takes_this_pass_or_the_next_alike);
    RUN(a_code_breakpoint_that_stops_elsewhere_is_spurious);
    return HARNESS_EXIT();
}

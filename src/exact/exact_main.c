/*
 * exact_main.c - the "wasp" Valgrind tool: registration, options, threads,
 * the shadow call stack, --exact-limit, and when the raw file is written.
 *
 * Options come from `wasp run --exact` (src/cli/run_exact.c), never from a
 * user directly: --wasp-dir=DIR --wasp-mode=M --wasp-fp-tolerance=F
 * --wasp-stack=auto|include|exclude --wasp-limit-insns=N --wasp-limit-ms=N
 * (and, from tests only, --wasp-max-contexts=N).
 * A process whose program is "java" is a JVM (exact_java.c), whichever
 * process started it: the CLI gives every run the agent's maps-only mode
 * and Valgrind's check of generated code.
 *
 * Contexts come from a shadow call stack rather than from unwinding at each
 * access (which would cost microseconds per load): every superblock ending
 * in a call pushes (caller's node, callee's entry stack pointer) and moves
 * to the call site's child node; a return pops every frame whose entry
 * stack pointer lies below the stack pointer after it, which also repairs
 * the stack after longjmp or an exception unwinding several frames at once.
 */
#include "exact.h"

#include "pub_tool_clientstate.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"

#define MAX_VG_TIDS 4096
#define CHECK_EVERY 1000000ULL   /* guest instructions between two clock reads (time limit) */
#define CUT_GRACE 500000000ULL   /* guest instructions the agent gets to name frames after a cut */

exact_options exact_opts = { .mode = EXACT_SILENT_STORE, .fp_tolerance = 0.01, .fp_tolerance_text = "0.01",
                            .max_ctx = EXACT_MAX_CTX };
exact_thread *exact_cur;
exact_thread *exact_threads[EXACT_MAX_THREADS];
UInt exact_nthreads;
ULong exact_insns;
ULong exact_next_check = ~0ULL;
Bool exact_limit_hit;
ULong exact_cut_insns;

static exact_thread *by_tid[MAX_VG_TIDS];
static const HChar *stack_option = "auto";
static UInt start_ms;

/* The record of Valgrind thread tid, made on first sight. Thread indexes
 * are never reused (a new thread in a reused Valgrind slot gets a new one);
 * past EXACT_MAX_THREADS-1 threads, the last index is shared. */
exact_thread *exact_thread_of(ThreadId tid)
{
    if (tid >= MAX_VG_TIDS)
        VG_(tool_panic)("wasp: too many threads");
    if (by_tid[tid])
        return by_tid[tid];
    exact_thread *t = VG_(calloc)("wasp.thread", 1, sizeof *t);
    t->index = exact_nthreads + 1 < EXACT_MAX_THREADS ? ++exact_nthreads : EXACT_MAX_THREADS - 1;
    if (!exact_threads[t->index])
        exact_threads[t->index] = t;
    t->cap = 64;
    t->stack = VG_(malloc)("wasp.stack", t->cap * sizeof(exact_frame));
    t->stack_hi = VG_(thread_get_stack_max)(tid) + 1;
    t->stack_lo = t->stack_hi - VG_(thread_get_stack_size)(tid);
    by_tid[tid] = t;
    return t;
}

static void on_start_client_code(ThreadId tid, ULong blocks)
{
    (void)blocks;
    exact_cur = exact_thread_of(tid);
    if (!exact_cur->os_tid)
        exact_cur->os_tid = VG_(gettid)();
}

static void on_thread_exit(ThreadId tid)
{
    if (tid < MAX_VG_TIDS && by_tid[tid]) {
        if (exact_cur == by_tid[tid])
            exact_cur = NULL;
        by_tid[tid] = NULL;
    }
}

/* Pops the frames whose callee entry stack pointer is below sp: their
 * functions have returned (or were unwound past). */
static void pop_below(exact_thread *t, Addr sp)
{
    while (t->depth && t->stack[t->depth - 1].sp < sp)
        t->cur = t->stack[--t->depth].node;
}

void exact_call(Addr call_pc, Addr sp)
{
    exact_thread *t = exact_cur;
    if (!t)
        return;
    pop_below(t, sp + 1);
    if (t->depth == t->cap) {
        t->cap *= 2;
        t->stack = VG_(realloc)("wasp.stack", t->stack, t->cap * sizeof(exact_frame));
    }
    t->stack[t->depth++] = (exact_frame){ t->cur, sp };
    /* Deep recursion keeps its first frames, as an unwinder that stops would. */
    if (t->depth < EXACT_MAX_DEPTH)
        t->cur = exact_node_child(t->cur, call_pc);
}

void exact_ret(Addr sp)
{
    if (exact_cur)
        pop_below(exact_cur, sp);
}

/* Called (guarded, from generated code) when exact_insns reaches
 * exact_next_check: stops the program at the instruction limit, or when the
 * time limit has passed. */
void exact_check_limit(void)
{
    Bool stop = exact_opts.limit_insns && exact_insns >= exact_opts.limit_insns;
    if (!stop && exact_opts.limit_ms)
        stop = VG_(read_millisecond_timer)() - start_ms >= exact_opts.limit_ms;
    if (!stop) {
        exact_next_check = exact_insns + CHECK_EVERY;
        if (exact_opts.limit_insns && exact_next_check > exact_opts.limit_insns)
            exact_next_check = exact_opts.limit_insns;
        return;
    }
    /* Java frames are named by the agent: stop watching and let its poller
     * thread (exactmaps.c) name them and say so (WX_CUT_DONE), then write.
     * Not before the VM is up (no Java thread is watched yet, no poller),
     * nor when the agent has not answered in a grace period. */
    if (exact_opts.java && exact_java_started() && !exact_limit_hit) {
        exact_limit_hit = True;
        exact_next_check = exact_insns + CUT_GRACE;
        exact_cut_insns = exact_insns;
        exact_java_cut();
        return;
    }
    exact_limit_hit = True;
    exact_write_raw("limit");
    VG_(exit)(0);
}

void exact_error(const HChar *what)
{
    HChar line[1024];
    Int n = (Int)VG_(snprintf)(line, sizeof line, "[wasp] ERROR %s\n", what);
    VG_(write)(2, line, n < (Int)sizeof line ? n : (Int)sizeof line - 1);
}

static Bool parse_option(const HChar *arg)
{
    const HChar *v;
    if (VG_STR_CLO(arg, "--wasp-dir", exact_opts.dir)) {
    } else if (VG_STR_CLO(arg, "--wasp-mode", v)) {
        if (!VG_(strcmp)(v, "dead-store")) exact_opts.mode = EXACT_DEAD_STORE;
        else if (!VG_(strcmp)(v, "silent-store")) exact_opts.mode = EXACT_SILENT_STORE;
        else if (!VG_(strcmp)(v, "silent-load")) exact_opts.mode = EXACT_SILENT_LOAD;
        else VG_(fmsg_bad_option)(arg, "mode must be dead-store, silent-store or silent-load\n");
    } else if (VG_STR_CLO(arg, "--wasp-fp-tolerance", v)) {
        exact_opts.fp_tolerance = VG_(strtod)(v, NULL);
        exact_opts.fp_tolerance_text = v;
    } else if (VG_STR_CLO(arg, "--wasp-stack", v)) {
        stack_option = v;
    } else if (VG_STR_CLO(arg, "--wasp-limit-insns", v)) {
        exact_opts.limit_insns = VG_(strtoull10)(v, NULL);
    } else if (VG_STR_CLO(arg, "--wasp-limit-ms", v)) {
        exact_opts.limit_ms = VG_(strtoull10)(v, NULL);
    } else if (VG_STR_CLO(arg, "--wasp-max-contexts", v)) {
        ULong n = VG_(strtoull10)(v, NULL);
        if (n < 2 || n > EXACT_MAX_CTX)
            VG_(fmsg_bad_option)(arg, "the context table holds 2 to %u contexts\n", EXACT_MAX_CTX);
        exact_opts.max_ctx = (UInt)n;

    } else {
        return False;
    }
    return True;
}

static void print_usage(void)
{
    VG_(printf)("    (run through `wasp run --exact`, which passes the --wasp-* options)\n");
}

static void print_debug_usage(void)
{
}

/* A JVM: its Java threads, Java frames and runtime state (exact_java.c). */
static Bool is_java(void)
{
    const HChar *exe = VG_(args_the_exename);
    const HChar *slash = exe ? VG_(strrchr)(exe, '/') : NULL;
    return exe && !VG_(strcmp)(slash ? slash + 1 : exe, "java");
}

static void post_clo_init(void)
{
    exact_opts.java = is_java();
    /* auto: a native program's stack holds its data, a JVM's only its own
     * traffic (how-it-works.md), as in the sampled mode. */
    exact_opts.stack_exclude = !VG_(strcmp)(stack_option, "exclude") ||
                               (!VG_(strcmp)(stack_option, "auto") && exact_opts.java);
    if (!exact_opts.dir)
        VG_(fmsg_bad_option)("--wasp-dir", "is required (run the tool through `wasp run --exact`)\n");
    /* Calls must end superblocks for the shadow call stack to see them. */
    VG_(clo_vex_control).guest_chase = False;
    if (exact_opts.limit_insns)
        exact_next_check = exact_opts.limit_insns;
    if (exact_opts.limit_ms)
        exact_next_check = CHECK_EVERY;
    start_ms = VG_(read_millisecond_timer)();
    exact_shadow_init();
    exact_tables_init();
}

/* A forked child reports only what it does itself, and only the thread
 * that forked lives on in it: the others' records go (their pending bytes
 * in the shadow end as cross-thread, as any other thread's would). */
static void on_fork_child(ThreadId tid)
{
    exact_thread *me = exact_thread_of(tid);
    exact_tables_reset_pairs();
    exact_write_forget();
    for (UInt i = 1; i < EXACT_MAX_THREADS; i++)
        if (exact_threads[i] != me)
            exact_threads[i] = NULL;
    for (UInt i = 0; i < MAX_VG_TIDS; i++)
        if (i != tid)
            by_tid[i] = NULL;
    VG_(memset)(me->stats, 0, sizeof me->stats);
    me->os_tid = VG_(gettid)();
    exact_cur = me;
}

/* exec replaces the process (and this tool) without calling fini. */
static void pre_syscall(ThreadId tid, UInt no, UWord *args, UInt nargs)
{
    (void)tid; (void)args; (void)nargs;
    if (no == __NR_execve || no == __NR_execveat)
        exact_write_raw("exec");
}

static void post_syscall(ThreadId tid, UInt no, UWord *args, UInt nargs, SysRes res)
{
    (void)tid; (void)no; (void)args; (void)nargs; (void)res;
}

static void fini(Int exitcode)
{
    (void)exitcode;
    exact_write_raw("exit");
}

static void pre_clo_init(void)
{
    VG_(details_name)("wasp");
    VG_(details_version)("0.1.0");
    VG_(details_description)("wasp's exact mode: every dead store, silent store, silent load");
    VG_(details_copyright_author)("the wasp authors");
    VG_(details_bug_reports_to)("the wasp issue tracker");
    VG_(basic_tool_funcs)(post_clo_init, exact_instrument, fini);
    VG_(needs_command_line_options)(parse_option, print_usage, print_debug_usage);
    VG_(needs_syscall_wrapper)(pre_syscall, post_syscall);
    VG_(needs_client_requests)(exact_java_request);
    VG_(track_start_client_code)(on_start_client_code);
    VG_(track_pre_thread_ll_exit)(on_thread_exit);
    exact_syscall_init();
    VG_(atfork)(NULL, NULL, on_fork_child);
}

VG_DETERMINE_INTERFACE_VERSION(pre_clo_init)

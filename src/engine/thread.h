/*
 * thread.h - everything the engine keeps for one profiled thread.
 *
 * Allocated when the thread starts (normal context) from one arena that
 * stays mapped for the life of the process, so the signal handler can tell
 * a sig_data word of ours (it points into the arena) from anybody else's
 * TRAP_PERF signal without dereferencing a foreign pointer.
 */
#ifndef WASP_THREAD_H
#define WASP_THREAD_H

#include <linux/perf_event.h>
#include <sys/types.h>
#include <time.h>
#include "budget.h"
#include "cct.h"
#include "drops.h"
#include "pairs.h"
#include "watch.h"

#define THREAD_MAGIC 0x77617370u   /* "wasp" */
#define SIG_TAG_MASK 7ULL
#define SIG_TAG_SAMPLER 7ULL        /* slots use tags 0..3 */
/* The signal stack wasp gives a thread (engine.c): the lowest page guards. */
#define ALTSTACK_SIZE (256u * 1024u)
#define ALTSTACK_GUARD 4096u

enum thread_stat {
    STAT_SAMPLES,        /* sampler signals handled */
    STAT_ARMED,          /* samples that armed a watchpoint */
    STAT_DECLINED,       /* samples the reservoir chose not to monitor */
    STAT_REPLACED,       /* armed watches replaced before they trapped */
    STAT_TRAPS,          /* watchpoint traps handled */
    STAT_PRIMED,         /* traps absorbed from the sampled access itself */
    STAT_KEPT,           /* traps after which the watch stayed armed */
    STAT_SAMPLE_NS,      /* time in the sample handler */
    STAT_TRAP_NS,        /* time in the trap handler */
    STAT_SAMPLING_MS,    /* from the thread's start to its last sample */
    STAT_SIGTRAP_LOST,   /* 1: the program took SIGTRAP from wasp (raw rt_sigaction) */
    STAT_ATTACHED,       /* 1: the run was started in a running JVM (`wasp attach`) */
    STAT_PREEXISTING,    /* 1: the thread was running before the run started */
    STAT_CHECKPOINTS,    /* checkpoints written of this thread (checkpoint.c) */
    STAT_CHECKPOINT_NS,  /* their cost: the checkpoint thread's CPU time to copy, build, write */
    STAT_CHECKPOINT_PAUSE_NS,  /* how long the thread's handler stood aside for the copies */
    STAT_CHECKPOINT_SKIPPED,   /* samples and traps that arrived meanwhile (atomic: the handler's) */
    STAT_CODE_BREAKS,    /* samples whose access a code breakpoint was set to take (decode.h) */
    STAT_CODE_HITS,      /* code breakpoints that fired */
    STAT_GUARDS,         /* guarded samples: a code breakpoint at the pc watched for the pass's end */
    STAT_GUARD_DECLINED, /* guarded samples not monitored: no slot was free for the guard */
    STAT_WEIGHTED_PAIRS, /* the pairs counted, each times its watch's weight (watch.h), rounded */
    STAT_WEIGHT_SQUARES, /* the sum of those weights squared, rounded */
    STAT_RATE_WEIGHTS,   /* the pairs counted, each times its whole weight (survival times rate, monitor.c) */
    STAT_RATE_WEIGHT_SQUARES, /* the sum of those squared: the sampling error's effective count */
    STAT_TOUCHED_BEHIND, /* code breaks of accesses behind the pc whose bytes an access since may
                            have touched (its pair had ended: its next run is taken instead) */
    STAT_PAST_TARGET,    /* code breaks of accesses behind the pc past a branch target (they may
                            not have run on the sample's pass: guarded, taken at their next run) */
    STAT_TRAPS_AT_TARGET, /* traps taken from the instruction before a branch target (locate.c) */
    STAT_TRAPS_CLOBBERED, /* traps taken from an access that wrote its own base or index */
    STAT_TRAPS_PARTIAL,  /* traps that ended the pairs of part of a watch's bytes: the rest stayed watched */
    STAT_NEXT_PASS,      /* samples in a loop body that took their access's run on the next pass (monitor.c) */
    STAT_UNPLACED,       /* samples in code whose function no unwind or symbol table gives: only
                            the instruction at the pc could be taken (sampler_soft.c) */
    STAT_LIFECYCLE_NS,   /* wasp's time in the thread's start and end (events, tables, stacks,
                            building the profile written at its end) */
    STAT_THREADS_FOLDED, /* the ended threads' profile only: threads folded into it (engine.c) */
    STAT_UNFINISHED_FOLDED, /* the ended threads' profile only: their watches still armed at the end */
    STAT_TABLES_GROWN,   /* its context tree or pair table moved into a larger one (checkpoint.c) */
    STAT_ARMED_SEEN,     /* the watches armed after each sample, summed: samples' mean armed watches */
    STAT_SWITCHES,       /* folded threads' context switches while sampled (thread_switches: all) */
    STAT_SWITCH_NS,      /* folded threads' charge for them (thread_switches: all) */
    STAT_COUNT
};

typedef struct thread_state thread_state;   /* as engine.h names it (C11 allows both) */

struct thread_state {
    uint32_t magic;
    pid_t tid;
    int sampler_fd;
    timer_t cpu_timer;         /* ctimer sampler: the thread's CPU-time timer, when has_cpu_timer */
    int has_cpu_timer;
    void *sampler_ring;        /* PMU sampler: the event's mmap'd ring buffer */
    int bp_fd[4];
    uint64_t event_id[5];      /* perf ids of bp_fd[0..3] and sampler_fd, to know them again */
    struct perf_event_attr bp_attr[4];
    watch_set watch;
    cct contexts;
    pair_table pairs;
    uint64_t stats[STAT_COUNT];
    uint64_t drops[DROP_REASON_COUNT];
    void *fe_data;             /* the front end's per-thread data */
    uint64_t epoch;            /* engine epoch the armed watches belong to */
    uint64_t stack_lo, stack_hi;  /* the thread's stack, for stack=exclude; 0 if unknown */
    int in_handler;            /* set by the handler while it runs (seq_cst, see handler.c) */
    int tables_busy;           /* set while the handler changes contexts or pairs: a thread
                                * that died with it set has tables a guardian must not read */
    int sample_owed;           /* a sampler signal came due while the last handler ran (handler.c) */
    int closing;               /* set by the writer: handlers become no-ops */
    int pausing;               /* set by the checkpoint thread while it copies the tables */
    uint64_t seq;              /* the profile's number in its pid directory (<tid>-<seq>.wasp) */
    int written;               /* its profile was written: never twice */
    int timed_write;           /* written at its end: the build counts in its lifecycle_ns */
    int checkpointed;          /* the checkpoint thread copied it (under the registry lock) */
    uint64_t start_ns, last_sample_ns;   /* CLOCK_MONOTONIC */
    budget_state budget;       /* what wasp costs the thread, and its interval now */
    uint64_t clock_ns;         /* its CPU time while sampled, from the sampler (0: unknown) */
    uint64_t cpu_begin_ns;     /* ctimer sampler: the thread's CPU clock when it began */
    uint64_t cpu_mark_ns;      /* PMU and ctimer samplers: the thread's CPU clock at its last sample */
    uint64_t switches_begun;   /* the kernel's count of its context switches when sampling began */
    uint64_t switches_seen;    /* ... when last read (its handler, its end, the exit: switches.h) */
    void *altstack;            /* the signal stack wasp gave the thread, or NULL */
    /* A thread adopted from another (a run attached to a live JVM) cannot
     * be given a signal stack from outside: it is mapped here and the
     * thread's first handler installs it (handler.c), or leaves it unused
     * when the thread has one of its own; freed in normal context. */
    void *altstack_pending;
    void *altstack_unused;
    int registered;
    int fds_reserved;          /* counted against the engine's fd budget */
    char name[32];
};

const char *thread_stat_name(enum thread_stat s);

/* Normal context. A zeroed state from the arena, or NULL when the arena is
 * full or cannot be mapped. */
thread_state *thread_alloc(void);

/* Normal context. Gives t's slot back; late signals that still carry its
 * address are recognised as ours and ignored. */
void thread_release(thread_state *t);

/* Normal context, neither thread's handler running: adds the counters of
 * from, an ended thread with no pair, to into, the ended threads' profile
 * (its stats, drops, CPU time, budget, unfinished watches; one more thread
 * folded). */
void thread_fold(thread_state *into, const thread_state *from);

/* Normal or signal context (arithmetic only). t's context switches while
 * sampled, and what they cost it (switch_cost.h): each at the measured
 * cost of a switch with wasp's events (less as the budget lengthened the
 * thread's interval), plus what an armed watch adds times the watches its
 * samples left armed on average. Folded threads' are included. */
void thread_switches(const thread_state *t, uint64_t *switches, uint64_t *ns);

/* In a forked child: the arena's lock may have been held by a parent's
 * thread that did not come along. */
void thread_after_fork_child(void);

/* Normal context, after setting t->closing or t->pausing: waits until no
 * handler of t's thread is inside the monitor; none will enter it. The
 * handler sets in_handler and then reads closing and pausing; we set one
 * and then read in_handler, all sequentially consistent, so one of the two
 * sees the other (a Dekker handshake). A handler runs for microseconds; a
 * thread stopped inside one (a debugger, SIGSTOP) is waited for up to a
 * second, then given up. Returns 0 when quiet, -1 when given up. */
int thread_wait_quiet(thread_state *t);

/* Signal context. Whether sig_data (tag bits cleared) points into the
 * arena: a wasp signal, possibly for a state already released. */
int thread_in_arena(uint64_t addr);

/* Signal context, for an addr thread_in_arena accepted (the handler asks
 * that first: outside the arena a signal is not ours at all). The live
 * state addr names, or NULL (not a slot start, released). */
thread_state *thread_live(uint64_t addr);

#endif

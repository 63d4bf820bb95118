/*
 * thread.h - everything the engine keeps for one profiled thread.
 *
 * Allocated when the thread starts (normal context); the signal handler
 * reaches it through the perf sig_data word, so it must stay 8-byte aligned.
 */
#ifndef WASP_THREAD_H
#define WASP_THREAD_H

#include <linux/perf_event.h>
#include <sys/types.h>
#include "cct.h"
#include "drops.h"
#include "pairs.h"
#include "watch.h"

#define THREAD_MAGIC 0x77617370u   /* "wasp" */
#define SIG_TAG_MASK 7ULL
#define SIG_TAG_SAMPLER 7ULL        /* slots use tags 0..3 */

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
    STAT_COUNT
};

struct thread_state {
    uint32_t magic;
    pid_t tid;
    int sampler_fd;
    void *sampler_ring;        /* PMU sampler: the event's mmap'd ring buffer */
    int bp_fd[4];
    struct perf_event_attr bp_attr[4];
    watch_set watch;
    cct contexts;
    pair_table pairs;
    uint64_t stats[STAT_COUNT];
    uint64_t drops[DROP_REASON_COUNT];
    void *fe_data;             /* the front end's per-thread data */
    uint64_t epoch;            /* engine epoch the armed watches belong to */
    uint64_t stack_lo, stack_hi;  /* the thread's stack, for stack=exclude; 0 if unknown */
    volatile int in_handler;   /* set by the handler while it runs */
    volatile int closing;      /* set by the writer: handlers become no-ops */
    int registered;
    int fds_reserved;          /* counted against the engine's fd budget */
    char name[32];
};

const char *thread_stat_name(enum thread_stat s);

#endif

/*
 * merge_budget.h - the overhead budget across a run's threads: the budget
 * they ran under, what wasp cost each (max and median), the effective mean
 * sampling interval, and in how many the budget cut the sample rate.
 *
 * Read from each profile's `budget.*` stats (docs/profile-format.md),
 * which the report model keeps out of its summed stats: a budget or a
 * signal cost summed over threads means nothing. Profiles written before
 * the budget existed have none, and are left out.
 */
#ifndef WASP_MERGE_BUDGET_H
#define WASP_MERGE_BUDGET_H

#include "profile.h"

#include <stddef.h>
#include <stdint.h>

#define MERGE_BUDGET_PREFIX "budget."

typedef struct merge_budget {
    size_t nprofiles;           /* profiles with a budget account */
    size_t nthreads;            /* the threads they stand for (profile_threads) */
    uint64_t lifecycle_ns;      /* wasp's time in those threads' starts and ends */
    uint64_t checkpoint_ns;     /* the checkpoint thread's CPU time on their checkpoints */
    uint64_t switches;          /* their context switches while sampled ... */
    uint64_t switch_ns;         /* ... and what wasp's events added to them */
    uint64_t switch_cost_ns, switch_floor_ns, switch_armed_ns;  /* the largest measured (switch_cost.h) */
    uint32_t ppm;               /* the budget (parts per million, 0: off) of the first ... */
    int ppm_mixed;              /* ... unless threads disagree */
    uint64_t signal_cost_ns;    /* the largest charged per signal */
    double *overheads;          /* wasp time / CPU time of each thread that ran sampled */
    size_t noverheads, cap;
    double overhead_max, overhead_median;
    /* The thread with the largest: a near-idle thread's few samples or
     * many switches can read far above the rest, and the reader needs to
     * know which thread and how much CPU time that share is of. */
    int64_t max_tid;
    char max_name[64];
    uint64_t max_cpu_ns;
    /* All those threads' wasp time (handlers, lifecycle, checkpoints, switches) over
     * all their CPU time: a JVM's short threads (JFR's, say) can read 25% while the
     * process pays 1.5%. */
    uint64_t measured_wasp_ns, measured_cpu_ns;
    double overhead_all;
    uint64_t cpu_ns, wasp_ns, periods_milli, cut_ns;
    size_t threads_cut;         /* threads whose interval the budget lengthened */
    uint64_t mean_interval;     /* CPU time per sample over all threads; 0: unknown */
    uint64_t clock_ns;          /* the threads' CPU time by their task clocks, wasp's taken out */
    uint64_t clocked_cpu_ns;    /* cpu_ns of those threads: what their samples stood for */
    uint64_t samples;           /* their samples */
    size_t nclocked;            /* threads with a task clock (budget.clock_ns) */
    uint64_t interval_max;      /* the longest interval any thread reached */
} merge_budget;

/* Takes one thread's account. Returns 0, or -1 when out of memory. */
int merge_budget_add(merge_budget *b, const profile *p);

/* Computes the max, median, the whole's share and the mean interval. */
void merge_budget_finish(merge_budget *b);

/* The share of the clocked threads' CPU time that no sample stood for
 * (periods that ended in the kernel give none), less one interval a thread
 * for the tail after its last sample; 0 when unknown. */
double merge_budget_unsampled(const merge_budget *b, uint64_t interval);

void merge_budget_free(merge_budget *b);

/* Whether a stat belongs to the budget's account (not summed). */
int merge_budget_is_stat(const char *name);

#endif

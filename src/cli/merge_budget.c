/*
 * merge_budget.c - the run's overhead budget from its threads' accounts
 * (merge_budget.h).
 */
#include "merge_budget.h"
#include "merge_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int merge_budget_is_stat(const char *name)
{
    return strncmp(name, MERGE_BUDGET_PREFIX, sizeof MERGE_BUDGET_PREFIX - 1) == 0;
}

/* A stat's value; -1 when the profile lacks it. */
static int budget_stat(const profile *p, const char *name, uint64_t *v)
{
    for (size_t i = 0; i < p->nstats; i++) {
        if (!strcmp(p->stats[i].name, name)) {
            *v = p->stats[i].value;
            return 0;
        }
    }
    return -1;
}

static int add_overhead(merge_budget *b, double v)
{
    if (merge_grow((void **)&b->overheads, &b->cap, b->noverheads, sizeof *b->overheads) != 0)
        return -1;
    b->overheads[b->noverheads++] = v;
    return 0;
}

/* The thread's CPU time by its task clock, wasp's own taken out, when the
 * profile has one (budget.clock_ns: software sampler, since 2026-11-27);
 * 0 otherwise. Its samples count only user time: cpu_ns, one period a
 * sample, misses the periods that ended in the kernel. */
static uint64_t clocked_cpu(merge_budget *b, const profile *p, uint64_t cpu, uint64_t wasp,
                            uint64_t threads)
{
    uint64_t clock = 0, samples = 0;
    if (budget_stat(p, "budget.clock_ns", &clock) != 0 || clock <= wasp)
        return 0;
    budget_stat(p, "samples", &samples);
    b->nclocked += threads;
    b->clock_ns = merge_sat_add(b->clock_ns, clock - wasp);
    b->clocked_cpu_ns = merge_sat_add(b->clocked_cpu_ns, cpu);
    b->samples = merge_sat_add(b->samples, samples);
    return clock - wasp;
}

/* A profile stands for one thread, or for the threads folded into its
 * process's ended-threads profile, which is no thread: it has no overhead
 * of its own among the threads', only its part of the whole. wasp's time
 * in the threads' starts and ends (lifecycle_ns) counts with its
 * handlers' (a program that starts a thread per task pays it per task),
 * and so does the checkpoint thread's CPU time spent on each thread's
 * checkpoints (checkpoint_ns), which grows with the thread's tables, and
 * what wasp's events added to the thread's context switches (switch_ns):
 * a server's worker that blocks per request pays it per request. */
int merge_budget_add(merge_budget *b, const profile *p)
{
    uint64_t ppm, cost = 0, switch_cost = 0, switch_armed = 0, switch_floor = 0, cpu = 0, wasp = 0, cut = 0, periods = 0, imax = 0, clocked;
    uint64_t threads = profile_threads(p), life = profile_stat(p, "lifecycle_ns");
    uint64_t ckpt = profile_stat(p, "checkpoint_ns"), switch_ns = profile_stat(p, "switch_ns");
    if (budget_stat(p, "budget.ppm", &ppm) != 0) return 0;
    budget_stat(p, "budget.signal_cost_ns", &cost);
    budget_stat(p, "budget.switch_cost_ns", &switch_cost);
    budget_stat(p, "budget.switch_armed_ns", &switch_armed);
    budget_stat(p, "budget.switch_floor_ns", &switch_floor);
    budget_stat(p, "budget.cpu_ns", &cpu);
    budget_stat(p, "budget.wasp_ns", &wasp);
    budget_stat(p, "budget.cut_ns", &cut);
    budget_stat(p, "budget.periods_milli", &periods);
    budget_stat(p, "budget.interval_max", &imax);
    if (b->nprofiles++ == 0) b->ppm = (uint32_t)(ppm > UINT32_MAX ? UINT32_MAX : ppm);
    else if (b->ppm != ppm) b->ppm_mixed = 1;
    b->nthreads += threads;
    b->lifecycle_ns = merge_sat_add(b->lifecycle_ns, life);
    b->checkpoint_ns = merge_sat_add(b->checkpoint_ns, ckpt);
    b->switches = merge_sat_add(b->switches, profile_stat(p, "switches"));
    b->switch_ns = merge_sat_add(b->switch_ns, switch_ns);
    if (cost > b->signal_cost_ns) b->signal_cost_ns = cost;
    if (switch_cost > b->switch_cost_ns) b->switch_cost_ns = switch_cost;
    if (switch_armed > b->switch_armed_ns) b->switch_armed_ns = switch_armed;
    if (switch_floor > b->switch_floor_ns) b->switch_floor_ns = switch_floor;
    if (imax > b->interval_max) b->interval_max = imax;
    b->cpu_ns = merge_sat_add(b->cpu_ns, cpu);
    b->wasp_ns = merge_sat_add(b->wasp_ns, wasp);
    b->cut_ns = merge_sat_add(b->cut_ns, cut);
    b->periods_milli = merge_sat_add(b->periods_milli, periods);
    b->threads_cut += cut > 0;
    clocked = clocked_cpu(b, p, cpu, wasp, threads);
    if (clocked)
        cpu = clocked;
    wasp = merge_sat_add(merge_sat_add(merge_sat_add(wasp, life), ckpt), switch_ns);
    b->measured_wasp_ns = merge_sat_add(b->measured_wasp_ns, wasp);
    if (!cpu)
        return 0;
    b->measured_cpu_ns = merge_sat_add(b->measured_cpu_ns, cpu);
    if (profile_is_ended(p))
        return 0;
    double share = (double)wasp / (double)cpu;
    if (!b->noverheads || share > b->overhead_max) {   /* finish sets the same max */
        b->overhead_max = share;
        b->max_tid = p->tid;
        snprintf(b->max_name, sizeof b->max_name, "%s", p->thread_name ? p->thread_name : "");
        b->max_cpu_ns = cpu;
    }
    return add_overhead(b, share);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void merge_budget_finish(merge_budget *b)
{
    size_t n = b->noverheads;
    if (n) {
        qsort(b->overheads, n, sizeof *b->overheads, cmp_double);
        b->overhead_max = b->overheads[n - 1];
        b->overhead_median = n % 2 ? b->overheads[n / 2]
                                   : (b->overheads[n / 2 - 1] + b->overheads[n / 2]) / 2;
    }
    if (b->measured_cpu_ns)
        b->overhead_all = (double)b->measured_wasp_ns / (double)b->measured_cpu_ns;
    b->mean_interval = b->periods_milli
        ? (uint64_t)((double)b->cpu_ns * 1000.0 / (double)b->periods_milli) : 0;
    /* Every thread clocked: the time between samples as it was. Samples
     * never come oftener than their periods, so the clock's figure only
     * raises the periods' one (it falls below by what wasp_ns's estimate
     * of each signal's kernel time is off, ~5%). */
    if (b->nthreads && b->nclocked == b->nthreads && b->samples && b->clock_ns / b->samples > b->mean_interval)
        b->mean_interval = b->clock_ns / b->samples;
}

double merge_budget_unsampled(const merge_budget *b, uint64_t interval)
{
    double tails = (double)interval * (double)b->nclocked, missed;
    if (!b->clock_ns)
        return 0;
    missed = (double)b->clock_ns - (double)b->clocked_cpu_ns - tails;
    return missed > 0 ? missed / (double)b->clock_ns : 0;
}

void merge_budget_free(merge_budget *b)
{
    free(b->overheads);
    memset(b, 0, sizeof *b);
}

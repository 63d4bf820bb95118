/*
 * sampler.h - the interface every address sampler implements.
 *
 * A sampler starts and stops per-thread sampling and, in the handler, turns
 * one of its signals into a memory access (pc, address, width, kind). The
 * software sampler decodes instructions; a PMU sampler reads the address the
 * hardware recorded.
 */
#ifndef WASP_SAMPLER_H
#define WASP_SAMPLER_H

#include <signal.h>
#include <stddef.h>
#include <ucontext.h>
#include "access.h"
#include "drops.h"
#include "engine.h"
#include "thread.h"

typedef struct sampler {
    const char *name;
    /* 1: a sample is the pc its signal interrupts (software), 0: the
     * pc the hardware recorded when the period ended (PMU). */
    int pc_at_delivery;
    /* 1: set_period arms the clock again (a timer, not a perf event, whose
     * period change leaves it disabled), so a disable that met a running
     * handler must be repeated once the handler is out (engine.c). */
    int rearms_in_handler;
    /* Normal context, in the thread itself. Returns 0, or -1 with a message. */
    int (*thread_start)(thread_state *t, const wasp_options *o, char *err, size_t errlen);
    void (*thread_stop)(thread_state *t);
    /* Normal context: starts (on) or stops the thread's samples; a sampler
     * armed with a period (ctimer) is armed with period. 0 or -1. */
    int (*enable)(thread_state *t, int on, uint64_t period);
    /* Signal context. The access of the wanted kind (ACCESS_STORE or
     * ACCESS_LOAD) this sample stands for; *before_run is set when the
     * access has not executed yet (the watch must absorb its own first trap). */
    enum drop_reason (*take)(thread_state *t, const siginfo_t *si, const ucontext_t *uc,
                             const engine_frontend *fe, uint8_t want, mem_access *out, int *before_run);
    /* Signal context, once per sample: the thread's CPU time since its
     * previous sample (or since thread_start), for the budget (budget.h);
     * cpu_now is the thread's CPU clock, which the handler has just read. */
    uint64_t (*cpu_since_sample)(thread_state *t, uint64_t cpu_now);
    /* Signal context, in a sample's handler: the next sample comes period
     * (ns or events) after the one being handled. The clock restarts now;
     * handler_ns, the handler's CPU time so far, is what a clock of CPU
     * time has already counted of it. Returns 0 or -1. */
    int (*set_period)(thread_state *t, uint64_t period, uint64_t handler_ns);
    /* Normal context, optional (NULL): the thread's CPU time since its
     * thread_start, in the kernel too, or 0 when unknown. */
    uint64_t (*cpu_total)(thread_state *t);
} sampler;

extern const sampler sampler_software;
extern const sampler sampler_ctimer;
extern const sampler sampler_pmu;

/* The software samplers' take: the access a sample at the interrupted pc
 * stands for (sampler_soft.c). */
enum drop_reason software_take(thread_state *t, const siginfo_t *si, const ucontext_t *uc,
                               const engine_frontend *fe, uint8_t want, mem_access *out, int *before_run);

/* Normal context, CLI only (it spins ~20 ms): how often the kernel checks
 * CPU-time timers here, in this thread's CPU time (the tick), or 0. */
uint64_t ctimer_tick_ns(void);

/* The PMU and ctimer samplers' cpu_since_sample: by the thread's CPU clock,
 * from the mark the last sample (or thread_start) left (sampler_pmu.c). */
uint64_t sampler_cpu_since_mark(thread_state *t, uint64_t cpu_now);

/* The perf samplers' enable: the event's fd, when it has one. */
int sampler_perf_enable(thread_state *t, int on, uint64_t period);

/* Normal context, once per process: the sampler o->sampler means on this
 * machine, looking for PMUs under sysfs_root (PMU_SYSFS_ROOT). auto gives
 * the PMU sampler when its event opens, else a software one (the CPU-time
 * timer from CTIMER_MIN_INTERVAL_NS up, the task clock below); pmu gives
 * the PMU sampler or NULL. When the PMU is not used, why says why and
 * names the fix (empty for an explicit software choice). */
const sampler *sampler_select(const wasp_options *o, const char *sysfs_root, char *why, size_t whylen);

#endif

/*
 * sampler_soft.c - software address sampling for machines without a PMU.
 *
 * A per-thread task-clock event interrupts the thread every `interval` of its
 * CPU time. The sample lands right after the instruction that just retired
 * in nearly every case (98-99.9% of samples, measured on this VM). We decode forward from the
 * function start the front end knows to find the pc's basic block, and draw
 * one access of the wanted kind from it, each equally likely (decode.h).
 * Without a known start we fall back to the instruction at the pc, which
 * has not run yet.
 */
#include "sampler.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "decode.h"
#include "locate.h"
#include "perf.h"

static int soft_thread_start(thread_state *t, const wasp_options *o, char *err, size_t errlen)
{
    t->sampler_fd = perf_open_sampler(t->tid, o->interval_ns, (uint64_t)t | SIG_TAG_SAMPLER);
    if (t->sampler_fd < 0) {
        snprintf(err, errlen, "cannot open the task-clock sampler: %s — check "
                 "/proc/sys/kernel/perf_event_paranoid (needs <= 2) and seccomp", strerror(errno));
        return -1;
    }
    return 0;
}

static void soft_thread_stop(thread_state *t)
{
    if (t->sampler_fd >= 0) {
        perf_enable(t->sampler_fd, 0);
        close(t->sampler_fd);
        t->sampler_fd = -1;
    }
}

int sampler_perf_enable(thread_state *t, int on, uint64_t period)
{
    (void)period;
    return t->sampler_fd >= 0 ? perf_enable(t->sampler_fd, on) : 0;
}

enum drop_reason software_take(thread_state *t, const siginfo_t *si, const ucontext_t *uc,
                               const engine_frontend *fe, uint8_t want, mem_access *out, int *before_run)
{
    (void)si;
    *before_run = 0;
    /* xorshift's high bits: its lowest ones are its weakest. */
    enum drop_reason r = locate_sampled_access(fe, uc, want, watch_random(&t->watch) >> 32, out);
    if (r != DROP_NO_BOUNDARY) {
        *before_run = r == DROP_NONE && out->ahead;
        return r;
    }
    /* No boundary known: the instruction at the pc, which has not run yet.
     * The timer lands mostly after the instruction that took the time,
     * so most such samples find none: counted, for the report to say. */
    if (out->unplaced)
        t->stats[STAT_UNPLACED]++;
    *before_run = 1;
    return decode_access_at((uint64_t)uc->uc_mcontext.gregs[REG_RIP], uc, out);
}

/* The task clock's own count: a sample comes every period of the
 * thread's CPU time, so no clock needs reading. (A period that ends in the
 * kernel gives no sample; the CPU time it counted is then missed, which
 * only makes the overhead look larger.) */
static uint64_t soft_cpu_since_sample(thread_state *t, uint64_t cpu_now)
{
    (void)cpu_now;
    return t->budget.period;
}

static int soft_set_period(thread_state *t, uint64_t period, uint64_t handler_ns)
{
    /* The task clock ran through the handler and restarts at the ioctl:
     * without this each interval grew by the handler's time (218 us a
     * sample in a guest Rhino run at 1 ms: BeanShell dead-store's sampled
     * pairs fell from 975 to 521). */
    return perf_set_period(t->sampler_fd, period > 2 * handler_ns ? period - handler_ns : period / 2);
}

/* The task clock counts all of the thread's time, the kernel's included:
 * its samples come only from user mode (exclude_kernel), so a period that
 * ends in the kernel gives none, and a thread that spends its time in
 * system calls gets fewer samples than its CPU time asks (budget.clock_ns
 * tells the report, docs/profile-format.md). */
static uint64_t soft_cpu_total(thread_state *t)
{
    uint64_t ns;
    return t->sampler_fd >= 0 && perf_read_count(t->sampler_fd, &ns) == 0 ? ns : 0;
}

const sampler sampler_software = {
    .name = "software",
    .pc_at_delivery = 1,
    .thread_start = soft_thread_start,
    .thread_stop = soft_thread_stop,
    .enable = sampler_perf_enable,
    .take = software_take,
    .cpu_since_sample = soft_cpu_since_sample,
    .set_period = soft_set_period,
    .cpu_total = soft_cpu_total,
};

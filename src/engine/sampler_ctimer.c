/*
 * sampler_ctimer.c - software address sampling driven by the thread's
 * POSIX CPU-time timer instead of a perf task-clock event.
 *
 * The kernel checks CPU-time timers at its scheduler tick, so a context
 * switch costs this timer nothing; a task-clock sampler is stopped and
 * restarted at every switch (a timer reprogram: ~2 us a switch at a 10 ms
 * interval on our VMs, most of what wasp added to a thread that blocks
 * often; bench/switches.sh). The price is resolution: a sample comes at the first tick after
 * its period, so intervals are whole ticks (4 ms at HZ=250), and this
 * sampler is auto's choice only from CTIMER_MIN_INTERVAL_NS up. Samples are
 * taken as the task-clock sampler takes them (sampler_soft.c): the timer
 * sends SIGTRAP to the thread itself (SIGEV_THREAD_ID) with the thread's
 * state in si_value, so the one handler (handler.c) knows it as ours.
 */
#include "sampler.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "clock.h"
#include "memread.h"

/* A thread wasp adopts (attach) is timed by its own clock, not the adopter's. */
static uint64_t thread_cpu(const thread_state *t)
{
    return clock_ns(clock_of_thread(t->tid));
}

/* Half a tick: a timer fires at the first tick after it expires, half a
 * tick late on average, so each period is set that much shorter (the same
 * for every thread of the process). */
static uint64_t tick_half;

static int ctimer_thread_start(thread_state *t, const wasp_options *o, char *err, size_t errlen)
{
    struct sigevent se;
    memset(&se, 0, sizeof se);
    se.sigev_notify = SIGEV_THREAD_ID;
    se.sigev_signo = SIGTRAP;
    se.sigev_value.sival_ptr = (void *)((uint64_t)t | SIG_TAG_SAMPLER);
    se._sigev_un._tid = t->tid;
    tick_half = o->tick_ns / 2;
    if (timer_create(clock_of_thread(t->tid), &se, &t->cpu_timer) != 0) {
        /* Each timer holds a queued signal, counted in the user's limit. */
        snprintf(err, errlen, "cannot create the thread's CPU-time timer: %s%s — run with "
                 "--sampler software, or check seccomp", strerror(errno),
                 errno == EAGAIN ? " (the user's limit of queued signals, ulimit -i)" : "");
        return -1;
    }
    t->has_cpu_timer = 1;
    t->cpu_mark_ns = t->cpu_begin_ns = thread_cpu(t);
    return 0;
}

static int arm(thread_state *t, uint64_t ns)
{
    struct itimerspec its = { { 0, 0 }, { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) } };
    return timer_settime(t->cpu_timer, 0, &its, NULL);
}

static void ctimer_thread_stop(thread_state *t)
{
    if (t->has_cpu_timer) {
        timer_delete(t->cpu_timer);
        t->has_cpu_timer = 0;
    }
}

static int ctimer_enable(thread_state *t, int on, uint64_t period)
{
    if (!t->has_cpu_timer)
        return 0;
    /* 0 disarms; a first period is drawn like every later one. */
    return arm(t, on ? (period > 2 * tick_half ? period - tick_half : period / 2) : 0);
}

/* A tick in a system call is not delivered there but as the call returns
 * (or at the `syscall` itself when it is restarted), so its pc says where
 * the kernel's time ended, not where the thread spent user time: dropped,
 * as the task clock (user samples only) gives none there. Taken, such
 * samples armed watches after every blocking call of a thread that hands
 * work on (tests/e2e/handoff.c: every sample lands there), and each armed
 * watch makes the thread's switches dearer. */
#define CODE_PAGE 4096u   /* the smallest x86-64 page: a safe bound for reads in place */

static int is_syscall(const uint8_t *b)
{
    return b[0] == 0x0f && b[1] == 0x05;
}

/* Read in place, as the decoder reads code (decode.c): the pc's page is
 * mapped, the thread was running there. Across a page edge, where the
 * other page may be unmapped or a guard, through memread (a system call,
 * 1.1 us here, which never faults). */
static int at_syscall(pid_t tid, uint64_t pc)
{
    uint64_t in_page = pc & (CODE_PAGE - 1);
    uint8_t around[4];
    if (in_page >= 2 && in_page <= CODE_PAGE - 2)
        return is_syscall((const uint8_t *)(uintptr_t)(pc - 2)) || is_syscall((const uint8_t *)(uintptr_t)pc);
    return memread(tid, pc - 2, around, sizeof around) == 0 && (is_syscall(around) || is_syscall(around + 2));
}

static enum drop_reason ctimer_take(thread_state *t, const siginfo_t *si, const ucontext_t *uc,
                                    const engine_frontend *fe, uint8_t want, mem_access *out, int *before_run)
{
    if (at_syscall(t->tid, (uint64_t)uc->uc_mcontext.gregs[REG_RIP])) {
        *before_run = 0;
        return DROP_IN_SYSCALL;
    }
    return software_take(t, si, uc, fe, want, out, before_run);
}

/* The timer is set relative to now, after the handler's time so far: as
 * for the task clock (sampler_soft.c), the period is that much shorter, so
 * that samples stay a period of the thread's CPU time apart. */
static int ctimer_set_period(thread_state *t, uint64_t period, uint64_t handler_ns)
{
    return ctimer_enable(t, 1, period > 2 * handler_ns ? period - handler_ns : period / 2);
}

static uint64_t ctimer_cpu_total(thread_state *t)
{
    uint64_t now = t->has_cpu_timer ? thread_cpu(t) : 0;
    return now > t->cpu_begin_ns ? now - t->cpu_begin_ns : 0;
}

const sampler sampler_ctimer = {
    .name = "ctimer",
    .pc_at_delivery = 1,
    .rearms_in_handler = 1,
    .thread_start = ctimer_thread_start,
    .thread_stop = ctimer_thread_stop,
    .enable = ctimer_enable,
    .take = ctimer_take,
    .cpu_since_sample = sampler_cpu_since_mark,
    .set_period = ctimer_set_period,
    .cpu_total = ctimer_cpu_total,
};

/* CPU time from now until the timer's signal is pending: it fires at the
 * first tick after it expires, so armed to expire at once it comes one
 * tick (of this thread's running) later. 0 when it does not come within
 * limit_ns. */
static uint64_t until_fired(timer_t tm, int sig, uint64_t limit_ns)
{
    struct itimerspec soon = { { 0, 0 }, { 0, 1000 } };
    sigset_t pending;
    uint64_t start = clock_ns(CLOCK_THREAD_CPUTIME_ID), now = start;
    if (timer_settime(tm, 0, &soon, NULL) != 0)
        return 0;
    while (now - start < limit_ns) {
        if (sigpending(&pending) == 0 && sigismember(&pending, sig) == 1)
            return now - start;
        now = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    }
    return 0;
}

uint64_t ctimer_tick_ns(void)
{
    const int sig = SIGRTMIN;
    sigset_t block, old;
    struct sigevent se;
    timer_t tm;
    uint64_t seen[5] = { 0 };
    const struct timespec zero = { 0, 0 };
    sigemptyset(&block);
    sigaddset(&block, sig);
    memset(&se, 0, sizeof se);
    se.sigev_notify = SIGEV_THREAD_ID;
    se.sigev_signo = sig;
    se._sigev_un._tid = gettid();
    if (pthread_sigmask(SIG_BLOCK, &block, &old) != 0)
        return 0;
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &se, &tm) == 0) {
        /* The first firing meets the tick wherever it is; each later one a
         * whole tick after it. */
        if (until_fired(tm, sig, 50000000) && sigtimedwait(&block, NULL, &zero) == sig)
            for (int i = 0; i < 5; i++) {
                seen[i] = until_fired(tm, sig, 50000000);
                if (!seen[i] || sigtimedwait(&block, NULL, &zero) != sig)
                    break;
            }
        timer_delete(tm);
    }
    while (sigtimedwait(&block, NULL, &zero) == sig)
        ;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    /* The middle one: a preemption stretches or shortens a few. */
    for (int i = 0; i < 5; i++)
        for (int j = i + 1; j < 5; j++)
            if (seen[j] < seen[i]) {
                uint64_t x = seen[i];
                seen[i] = seen[j];
                seen[j] = x;
            }
    return seen[0] ? seen[2] : 0;
}

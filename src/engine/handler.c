/*
 * handler.c - the SIGTRAP handler: one entry for both samples and traps.
 *
 * Runs in signal context: no malloc, no locks, no stdio; errno is preserved;
 * SIGTRAPs that are not TRAP_PERF signals of ours go to the previous handler.
 * What a sample or a trap does is monitor.c's; this file only recognises
 * the signal, times it and hands it over.
 */
#include "handler.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include "monitor.h"
#include "perf.h"

static struct sigaction previous_action;
static int empty_handler;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void handler_new_epoch(void)
{
    monitor_new_epoch();
}

static void pass_on(int sig, siginfo_t *si, void *uc)
{
    if (previous_action.sa_flags & SA_SIGINFO) {
        if (previous_action.sa_sigaction)
            previous_action.sa_sigaction(sig, si, uc);
    } else if (previous_action.sa_handler == SIG_DFL) {
        /* Not ours and nobody else's: do what the kernel would have done. */
        signal(sig, SIG_DFL);
        raise(sig);
    } else if (previous_action.sa_handler != SIG_IGN) {
        previous_action.sa_handler(sig);
    }
}

static void on_sigtrap(int sig, siginfo_t *si, void *ctx)
{
    uint64_t data;
    thread_state *t;

    if (si->si_code != TRAP_PERF) {
        pass_on(sig, si, ctx);
        return;
    }
    data = perf_sig_data(si);
    t = (thread_state *)(uintptr_t)(data & ~SIG_TAG_MASK);
    if (!t || t->magic != THREAD_MAGIC) {
        pass_on(sig, si, ctx);
        return;
    }
    if (t->closing || empty_handler)
        return;
    int saved_errno = errno;
    t->in_handler = 1;
    uint64_t start = now_ns();
    if ((data & SIG_TAG_MASK) == SIG_TAG_SAMPLER) {
        monitor_sample(t, si, ctx);
        t->stats[STAT_SAMPLE_NS] += now_ns() - start;
    } else {
        monitor_trap(t, si, ctx, (int)(data & SIG_TAG_MASK));
        t->stats[STAT_TRAP_NS] += now_ns() - start;
    }
    t->in_handler = 0;
    errno = saved_errno;
}

int handler_install(const wasp_options *o, const engine_frontend *fe, const sampler *s)
{
    struct sigaction sa;
    empty_handler = o->empty_handler;
    monitor_setup(o, fe, s, &monitor_perf_io);
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_sigtrap;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    return sigaction(SIGTRAP, &sa, &previous_action);
}

/*
 * signal_cost.c - the measured cost of one sampler signal (signal_cost.h).
 *
 * The same fixed loop runs twice on the calling thread, once plain and once
 * under a 50 us task-clock sampler whose handler only counts; the extra CPU
 * time divided by the signals taken is what each one cost. Three rounds,
 * the cheapest kept: other processes only ever add to it.
 */
#include "clock.h"
#include "signal_cost.h"

#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "options.h"
#include "perf.h"

#define PROBE_PERIOD_NS 50000
#define PROBE_LOOPS 2000000
#define PROBE_ROUNDS 3

static volatile uint64_t signals_seen;
static volatile uint64_t sink;

static void count_signal(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)si;
    (void)uc;
    signals_seen++;
}

static uint64_t timed_loop(void)
{
    uint64_t start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (uint64_t i = 0; i < PROBE_LOOPS; i++)
        sink = i;
    return clock_ns(CLOCK_THREAD_CPUTIME_ID) - start;
}

static uint64_t one_round(int fd)
{
    uint64_t plain = timed_loop();
    signals_seen = 0;
    perf_enable(fd, 1);
    uint64_t sampled = timed_loop();
    perf_enable(fd, 0);
    return signals_seen > 0 && sampled > plain ? (sampled - plain) / signals_seen : 0;
}

uint64_t signal_cost_ns(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = count_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGTRAP, &sa, &old) < 0)
        return 0;
    int fd = perf_open_sampler(0, PROBE_PERIOD_NS, 0);
    uint64_t best = 0;
    for (int i = 0; fd >= 0 && i < PROBE_ROUNDS; i++) {
        uint64_t c = one_round(fd);
        if (c && (!best || c < best))
            best = c;
    }
    if (fd >= 0)
        close(fd);
    sigaction(SIGTRAP, &old, NULL);
    return best;
}

uint64_t signal_cost_floor_ns(uint64_t cost_ns)
{
    uint64_t floor = cost_ns * SIGNAL_COST_FACTOR;
    return floor > OPTIONS_MIN_INTERVAL_NS ? floor : OPTIONS_MIN_INTERVAL_NS;
}

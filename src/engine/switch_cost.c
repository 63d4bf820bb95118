/*
 * switch_cost.c - the measured cost wasp's events add to a context switch
 * (switch_cost.h).
 *
 * Two threads of ours, pinned to one CPU, hand a byte back and forth:
 * each handoff switches one out and the other in. The pinger times its
 * rounds; the echoer follows its orders, which come down the same pipe,
 * to open the same events the pinger has before each setting.
 */
#include "clock.h"
#include "switch_cost.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "options.h"
#include "perf.h"

#define PROBE_ROUNDS 500      /* handoffs each way per setting */
#define PROBE_REPEATS 3
#define PROBE_ENOUGH_NS 100000000ULL   /* no further rounds after 100 ms */
/* What a switch costs depends on when the sampler is next due: a timer
 * due before the next tick is reprogrammed at every switch (a hypervisor
 * exit here), one due later is not. At a 10 ms period each switch cost
 * 1.5 us here with the sampler's period just started, 7-11 us at 1 ms.
 * A sampled thread switches at every point of its period, so the rounds
 * are cut in strata, each with the sampler restarted at (k + 1/2)/K of
 * the run's interval: the period left at a switch, evenly spread. */
#define PROBE_STRATA 10
/* The sampler signals now and then (SIGTRAP, ignored meanwhile); below
 * this interval, often enough to count in the rounds. */
#define PROBE_MIN_PERIOD_NS 1000000ULL
/* Orders to the echoer: a setting (below SETTINGS), a stratum (STRATUM +
 * k), a round ('r'), the end ('q'). */
#define STRATUM 16

/* A sampler due in a minute: never the next timer, never reprogrammed. */
#define FAR_PERIOD_NS (60ULL * 1000000000ULL)

/* No events; the sampler far from due and idle breakpoints; the sampler
 * at the run's interval (strata) and idle breakpoints; the same armed. */
enum setting { PLAIN, FAR, IDLE, ARMED, SETTINGS };

typedef struct probe {
    int to_echo[2], to_ping[2];
    int slots;
    uint64_t period_ns;      /* the task clock's; 0: no task clock */
    int cpu;
    int fds[OPTIONS_MAX_SLOTS + 1];
    uint64_t best[SETTINGS];
} probe;

/* Never written: armed breakpoints watch it and never trap. */
static uint64_t untouched[OPTIONS_MAX_SLOTS];

static void pin(const probe *p)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(p->cpu, &one);
    sched_setaffinity(0, sizeof(one), &one);   /* unpinned, it measures noisier, not wrong */
}

static void close_events(int *fds, int n)
{
    for (int i = 0; i < n; i++) {
        if (fds[i] >= 0)
            close(fds[i]);
        fds[i] = -1;
    }
}

/* The calling thread's events for setting s, as wasp opens them for a
 * thread it samples. Returns 0, or -1 when one could not be opened. */
static int open_events(const probe *p, int *fds, enum setting s)
{
    struct perf_event_attr attr;
    close_events(fds, OPTIONS_MAX_SLOTS + 1);
    if (s == PLAIN)
        return 0;
    uint64_t period = s == FAR ? FAR_PERIOD_NS : p->period_ns;
    if (p->period_ns && (fds[OPTIONS_MAX_SLOTS] = perf_open_sampler(0, period, 0)) < 0)
        return -1;
    if (fds[OPTIONS_MAX_SLOTS] >= 0 && perf_enable(fds[OPTIONS_MAX_SLOTS], 1) < 0)
        return -1;
    for (int i = 0; i < p->slots; i++) {
        if ((fds[i] = perf_open_breakpoint(0, 0, &attr)) < 0)
            return -1;
        if (s == ARMED && perf_arm_breakpoint(fds[i], &attr, (uint64_t)&untouched[i], 8, 0) < 0)
            return -1;
    }
    return 0;
}

/* The stratum k's period, set on the calling thread's sampler (if any,
 * and not the far one). */
static void start_stratum(const probe *p, const int *fds, enum setting s, int k)
{
    if (fds[OPTIONS_MAX_SLOTS] >= 0 && s != FAR)
        perf_set_period(fds[OPTIONS_MAX_SLOTS], p->period_ns * (2 * (uint64_t)k + 1) / (2 * PROBE_STRATA));
}

/* The echoer: does what the pinger orders (open a setting's events, start
 * a stratum), then answers (with 'x' when the events could not be opened);
 * a round's byte comes straight back. */
static void *echo(void *arg)
{
    probe *p = arg;
    int fds[OPTIONS_MAX_SLOTS + 1];
    unsigned char c;
    enum setting now = PLAIN;
    pin(p);
    memset(fds, -1, sizeof(fds));
    while (read(p->to_echo[0], &c, 1) == 1 && c != 'q') {
        if (c < SETTINGS && open_events(p, fds, (enum setting)c) < 0)
            c = 'x';
        else if (c < SETTINGS)
            now = (enum setting)c;
        else if (c >= STRATUM && c < STRATUM + PROBE_STRATA)
            start_stratum(p, fds, now, c - STRATUM);
        if (write(p->to_ping[1], &c, 1) != 1)
            break;
    }
    close_events(fds, OPTIONS_MAX_SLOTS + 1);
    return NULL;
}

static int send_and_wait(probe *p, unsigned char c, unsigned char *reply)
{
    return write(p->to_echo[1], &c, 1) == 1 && read(p->to_ping[0], reply, 1) == 1 ? 0 : -1;
}

/* One setting's rounds, both threads' events open: ns a round, 0 when
 * the events could not be opened. Every setting goes through the strata
 * alike; only samplers are restarted by them. */
static uint64_t time_setting(probe *p, enum setting s)
{
    unsigned char reply;
    uint64_t ns = 0;
    if (send_and_wait(p, (unsigned char)s, &reply) < 0 || reply != s || open_events(p, p->fds, s) < 0)
        return 0;
    for (int k = 0; k < PROBE_STRATA; k++) {
        if (send_and_wait(p, (unsigned char)(STRATUM + k), &reply) < 0)
            return 0;
        start_stratum(p, p->fds, s, k);
        uint64_t start = clock_ns(CLOCK_MONOTONIC);
        for (int i = 0; i < PROBE_ROUNDS / PROBE_STRATA; i++)
            if (send_and_wait(p, 'r', &reply) < 0)
                return 0;
        ns += clock_ns(CLOCK_MONOTONIC) - start;
    }
    close_events(p->fds, OPTIONS_MAX_SLOTS + 1);
    return ns / PROBE_ROUNDS;
}

static void *ping(void *arg)
{
    probe *p = arg;
    p->cpu = sched_getcpu();
    pthread_t echoer;
    if (p->cpu < 0 || pthread_create(&echoer, NULL, echo, p) != 0)
        return NULL;
    pin(p);
    uint64_t began = clock_ns(CLOCK_MONOTONIC);
    /* A slow machine (an emulator) gets one round, not a second's wait. */
    for (int r = 0; r < PROBE_REPEATS && (r == 0 || clock_ns(CLOCK_MONOTONIC) - began < PROBE_ENOUGH_NS); r++) {
        for (int s = 0; s < SETTINGS; s++) {
            uint64_t ns = time_setting(p, (enum setting)s);
            if (ns && (!p->best[s] || ns < p->best[s]))
                p->best[s] = ns;
        }
    }
    unsigned char q = 'q';
    if (write(p->to_echo[1], &q, 1) != 1)
        pthread_cancel(echoer);
    pthread_join(echoer, NULL);
    close_events(p->fds, OPTIONS_MAX_SLOTS + 1);
    return NULL;
}

/* A round trip is two switches, one of each thread. */
static uint64_t per_switch(uint64_t more, uint64_t less)
{
    return more > less ? (more - less) / 2 : 0;
}

/* The rounds on a thread of their own: only the probe's threads are
 * pinned. SIGTRAP is ignored meanwhile: the sampler signals it. */
static int run_probe(probe *p)
{
    struct sigaction ignore, old;
    pthread_t pinger;
    memset(&ignore, 0, sizeof(ignore));
    ignore.sa_handler = SIG_IGN;
    if (sigaction(SIGTRAP, &ignore, &old) < 0)
        return 0;
    int started = pthread_create(&pinger, NULL, ping, p) == 0;
    if (started)
        pthread_join(pinger, NULL);
    sigaction(SIGTRAP, &old, NULL);
    return started;
}

int switch_cost_measure(int slots, uint64_t period_ns, switch_cost *c)
{
    probe p;
    memset(&p, 0, sizeof(p));
    memset(p.fds, -1, sizeof(p.fds));
    p.slots = slots < 0 ? 0 : slots > OPTIONS_MAX_SLOTS ? OPTIONS_MAX_SLOTS : slots;
    p.period_ns = period_ns && period_ns < PROBE_MIN_PERIOD_NS ? PROBE_MIN_PERIOD_NS : period_ns;
    if (pipe(p.to_echo) < 0)
        return -1;
    if (pipe(p.to_ping) < 0) {
        close(p.to_echo[0]);
        close(p.to_echo[1]);
        return -1;
    }
    int started = run_probe(&p);
    close(p.to_echo[0]);
    close(p.to_echo[1]);
    close(p.to_ping[0]);
    close(p.to_ping[1]);
    for (int i = 0; i < SETTINGS; i++)
        if (!started || !p.best[i])
            return -1;
    c->base_ns = per_switch(p.best[IDLE], p.best[PLAIN]);
    c->floor_ns = per_switch(p.best[FAR], p.best[PLAIN]);
    if (c->floor_ns > c->base_ns)   /* the same, but for noise */
        c->floor_ns = c->base_ns;
    c->armed_ns = p.slots ? per_switch(p.best[ARMED], p.best[IDLE]) / (uint64_t)p.slots : 0;
    return 0;
}

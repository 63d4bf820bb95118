/*
 * stress.h - what every stress program shares (tests/stress/run).
 *
 * CPU work that stores to and loads from memory (so that wasp's sampler
 * has something to interrupt), a record of the threads a program started,
 * and the "#fact" lines on stderr against which the suite checks the
 * profiles: "#fact proc PID threads N tids D" says process PID ran N
 * threads (main included) with D distinct thread ids, so its run directory
 * must hold N profiles and no thread id more often than it was reused.
 * stdout carries only what does not depend on timing: the suite compares
 * it with an unprofiled run.
 */
#ifndef STRESS_H
#define STRESS_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STRESS_MAX_THREADS 8192

static pid_t stress_tids[STRESS_MAX_THREADS];
static int stress_ntids;

/* Called once by every thread the program runs, main included. */
static inline void stress_note_thread(void)
{
    int i = __atomic_fetch_add(&stress_ntids, 1, __ATOMIC_RELAXED);
    if (i < STRESS_MAX_THREADS)
        stress_tids[i] = gettid();
}

static inline int stress_distinct_tids(int n)
{
    int distinct = 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = stress_tids[j] == stress_tids[i];
        distinct += !seen;
    }
    return distinct;
}

/* After every thread was joined. write(2) only: safe in a forked child. */
static inline void stress_facts(void)
{
    int n = __atomic_load_n(&stress_ntids, __ATOMIC_RELAXED);
    if (n > STRESS_MAX_THREADS)
        n = STRESS_MAX_THREADS;
    dprintf(2, "#fact proc %d threads %d tids %d\n", (int)getpid(), n, stress_distinct_tids(n));
}

static inline double stress_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Stores and loads over buf[0..n) for about ms of this thread's CPU time. */
static inline uint64_t stress_burn_on(volatile uint64_t *buf, size_t n, double ms)
{
    double end = stress_cpu_ms() + ms;
    uint64_t sum = 0;
    for (uint64_t r = 0; stress_cpu_ms() < end; r++)
        for (size_t i = 0; i < n; i++) {
            buf[i] = (i & 8) ? r : 7;
            sum += buf[(i * 7) & (n - 1)];
        }
    return sum;
}

static inline uint64_t stress_burn(double ms)
{
    uint64_t buf[512];
    return stress_burn_on(buf, 512, ms);
}

/* Allocation-heavy work of a fixed size: its checksum is deterministic. */
static inline uint64_t stress_malloc_work(long rounds)
{
    uint64_t sum = 0;
    void *keep[64] = { 0 };
    for (long r = 0; r < rounds; r++) {
        size_t size = 16 + (size_t)((r * 2654435761u) % 4000);
        int k = (int)(r & 63);
        free(keep[k]);
        unsigned char *p = malloc(size);
        if (!p)
            abort();
        memset(p, (int)(r & 0xff), size);
        sum += p[size / 2] + size;
        keep[k] = p;
    }
    for (int k = 0; k < 64; k++)
        free(keep[k]);
    return sum;
}

#endif

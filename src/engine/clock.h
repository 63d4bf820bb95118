/*
 * clock.h - a clock's reading in nanoseconds. Async-signal-safe
 * (clock_gettime is), so handlers use it too.
 */
#ifndef WASP_CLOCK_H
#define WASP_CLOCK_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The CPU-time clock of thread tid of this process (the kernel ABI's
 * MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)): what CLOCK_THREAD_CPUTIME_ID
 * is in that thread, readable from another (a thread `wasp attach` adopts
 * is set up by the adopter). */
static inline clockid_t clock_of_thread(pid_t tid)
{
    return (clockid_t)((~(unsigned)tid << 3) | 6);
}

#endif

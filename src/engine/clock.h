/*
 * clock.h - a clock's reading in nanoseconds. Async-signal-safe
 * (clock_gettime is), so handlers use it too.
 */
#ifndef WASP_CLOCK_H
#define WASP_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif

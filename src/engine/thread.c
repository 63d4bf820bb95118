/*
 * thread.c - names of the per-thread counters, as written into profiles.
 */
#include "thread.h"

const char *thread_stat_name(enum thread_stat s)
{
    static const char *const names[STAT_COUNT] = {
        "samples", "armed", "declined", "replaced", "traps", "primed", "kept",
        "sample_ns", "trap_ns",
    };
    return (unsigned)s < STAT_COUNT ? names[s] : "unknown";
}

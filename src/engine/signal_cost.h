/*
 * signal_cost.h - what one sampler signal costs this thread, measured.
 *
 * A sample costs its delivery (12-40 us in our VMs) plus the handler; both
 * count as the thread's CPU time, so an interval near that cost leaves the
 * program no time to run (10 us never finished /bin/true). `wasp run`
 * measures the cost once and lengthens intervals the machine cannot
 * sustain.
 * Normal context; installs and removes its own SIGTRAP handler, so only
 * for a process wasp owns (the CLI), never inside a profiled program.
 */
#ifndef WASP_SIGNAL_COST_H
#define WASP_SIGNAL_COST_H

#include <stdint.h>

/* The measured CPU time of one task-clock SIGTRAP with an empty handler,
 * in ns: the least of three rounds, so a busy machine's noise does not
 * count (0 when it cannot be measured: no perf, no signal). About 60 ms. */
uint64_t signal_cost_ns(void);

/* The shortest interval a machine whose signal costs cost_ns sustains:
 * SIGNAL_COST_FACTOR times it (the real handler costs about one signal
 * more, so wasp then takes at most two thirds of the thread's time), and
 * never below OPTIONS_MIN_INTERVAL_NS. */
#define SIGNAL_COST_FACTOR 3
uint64_t signal_cost_floor_ns(uint64_t cost_ns);

#endif

/*
 * switch_cost.h - what wasp's events add to one context switch, measured.
 *
 * A thread wasp samples pays on every context switch, asleep or not: the
 * kernel stops and restarts its task-clock sampler (a timer reprogrammed,
 * which in our VMs is a hypervisor exit) and swaps its breakpoints into
 * the debug registers. A pipe ping-pong pinned to one CPU took 5.1 us a
 * round trip here, 10.1 us with the sampler and four idle breakpoints
 * open in each thread, 13.5 us with the four armed: a server that hands
 * every request from thread to thread pays that per request, and no
 * handler time shows it. `wasp run` measures the parts once; each
 * profile charges its thread's switches with them (thread_switches).
 * Normal context; starts and joins two threads of its own and pins only
 * them, so only for a process wasp owns (the CLI).
 */
#ifndef WASP_SWITCH_COST_H
#define WASP_SWITCH_COST_H

#include <stdint.h>

typedef struct switch_cost {
    uint64_t base_ns;    /* one switch of a thread with its sampler and idle breakpoints */
    uint64_t floor_ns;   /* the same with the sampler far from due: what longer intervals
                            come down to (the timer is not reprogrammed) */
    uint64_t armed_ns;   /* what each armed breakpoint adds to it */
} switch_cost;

/* Measures all three: two threads hand a byte back and forth through
 * pipes on one CPU, plain, then with a task-clock sampler of period_ns
 * (none when 0: the PMU sampler's own cost is not measured) and `slots`
 * breakpoints each, idle (with the sampler at period_ns, and due in a
 * minute), then armed on a word nobody writes. The least of three rounds
 * per setting is kept: other processes only ever add to it. Pinned to one
 * CPU, it is a busy CPU's cost: a handoff to an idle CPU reprograms its
 * timer anyway, so at short intervals the charge there runs high (1.2-2.1
 * times the measured added time at 1 ms, 0.6-1.5 times at 10 ms:
 * bench/switches.sh). 64-74 ms at 10 ms, 114-121 ms at 1 ms here. Returns 0, or -1 when it cannot be
 * measured (no perf, no threads): *c is then left as it was. */
int switch_cost_measure(int slots, uint64_t period_ns, switch_cost *c);

#endif

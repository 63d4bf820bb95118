/*
 * budget.h - the per-thread overhead budget (`budget=2%`): what wasp costs
 * a thread, and the controller that lengthens its sampling interval (and
 * arms fewer watches) while that cost runs over the budget.
 *
 * Every signal wasp takes costs the thread its delivery (measured once per
 * run, signal_cost.h) plus the handler's own CPU time; that sum, against the
 * thread's CPU time (the task-clock sampler's own count, or the thread's
 * CPU clock for the PMU sampler), is the thread's overhead. Every
 * BUDGET_WINDOW samples the controller looks at the window just ended:
 * over the budget, the interval grows to where the window's cost per
 * sample would take BUDGET_AIM of it; well under (BUDGET_RECOVER), it
 * shrinks back toward the requested interval, at most halving per window.
 * It never goes below the requested interval (the floor).
 *
 * Pure arithmetic on a budget_state: signal-safe, no system calls. The
 * handler (handler.c) feeds it and applies the new period; profile_build
 * writes its totals as `budget.*` stats (docs/profile-format.md).
 */
#ifndef WASP_BUDGET_H
#define WASP_BUDGET_H

#include <stdint.h>

#define BUDGET_WINDOW 8          /* samples per controller step */
#define BUDGET_AIM 0.8           /* lengthen to where the cost is this share of the budget */
#define BUDGET_RECOVER 0.5       /* below this share of the budget, shorten again */
#define BUDGET_MAX_STRETCH 1000  /* never lengthen past this many times the floor */

typedef struct budget_state {
    uint32_t ppm;            /* the budget, parts per million of CPU time; 0: off */
    uint64_t signal_cost_ns; /* what delivering one signal costs the thread */
    /* A context switch's costs (switch_cost.h): not the controller's, as
     * lengthening the interval cuts them little (thread_switches). */
    uint64_t switch_cost_ns, switch_floor_ns, switch_armed_ns;
    uint64_t floor, ceiling; /* the requested interval (ns or events), and the longest */
    uint64_t period;         /* the interval in effect */
    int slots, slot_limit;   /* watches the thread may arm: configured, allowed now */
    /* The window being filled. */
    uint32_t win_samples;
    uint64_t win_cpu_ns, win_wasp_ns, win_trap_ns;
    /* The thread's totals, for its profile. */
    uint64_t cpu_ns, wasp_ns;
    uint64_t cut_ns;         /* CPU time spent with the period above the floor */
    uint64_t periods_milli;  /* sum of window CPU / period, x1000: samples expected */
    uint64_t period_max;
} budget_state;

/* Normal context. floor is the requested interval (ns for the software
 * sampler, events for the PMU one), ceiling the longest allowed. */
void budget_init(budget_state *b, uint32_t ppm, uint64_t signal_cost_ns, uint64_t floor,
                 uint64_t ceiling, int slots);

/* Normal context. Adds from's totals (its open window included) to into's:
 * an ended thread's account kept in the process's ended-threads profile. */
void budget_fold(budget_state *into, const budget_state *from);

/* Signal context. One signal of ours took handler_ns of the thread's CPU
 * time in the handler; trap says it was a watchpoint's. */
void budget_charge(budget_state *b, uint64_t handler_ns, int trap);

/* Signal context, after budget_charge for a sample: the thread ran cpu_ns
 * since its previous sample. Returns the new period when the controller
 * changed it, else 0; either way b->period is the interval the sampler's
 * next period is drawn around (budget_draw_period). */
uint64_t budget_sample(budget_state *b, uint64_t cpu_ns);

/* Signal context. The period the sampler is given for its next sample,
 * drawn around the budget's: uniform in [period/2, 3 period/2) as draw
 * (24 random bits) runs over its range, so the mean stays the period. A
 * fixed period aliases with a program's own (a round of loops), and the
 * handler's cost, which depends on where a sample landed, moves the next
 * landing by as much each time: in the QEMU guest, whose clock counts
 * instructions and has no jitter of its own, tests/e2e bias_arm's program
 * read 37.8% for 50% with a fixed period, 47.7% with drawn ones. */
uint64_t budget_draw_period(uint64_t period, uint32_t draw);

/* The controller: the interval that follows one where the thread spent
 * wasp_ns of cpu_ns in wasp, under a budget of ppm, never below floor nor
 * above ceiling. */
uint64_t budget_next_interval(uint64_t cpu_ns, uint64_t wasp_ns, uint64_t interval, uint32_t ppm,
                              uint64_t floor, uint64_t ceiling);

/* How many watches may be armed after such a window, trap_ns of wasp_ns
 * going to watchpoint traps: one fewer while over the budget with traps a
 * quarter of the cost or more, one more (up to slots) once well under. */
int budget_next_slots(uint64_t cpu_ns, uint64_t wasp_ns, uint64_t trap_ns, int limit, int slots,
                      uint32_t ppm);

/* Adds the window being filled to the totals and starts a new one (the
 * controller does at each step; the profile writer for the last one). */
void budget_flush(budget_state *b);

/* The effective mean interval so far: CPU time per expected sample. */
uint64_t budget_mean_interval(const budget_state *b);

#endif

/*
 * budget.c - the overhead budget's accounting and controller (budget.h).
 *
 * Runs in signal context: arithmetic only, no system calls, no locks.
 * Doubles are safe here (the kernel saves the FPU state of the
 * interrupted code) and keep 64-bit products from overflowing.
 */
#include "budget.h"

void budget_init(budget_state *b, uint32_t ppm, uint64_t signal_cost_ns, uint64_t floor,
                 uint64_t ceiling, int slots)
{
    *b = (budget_state){ .ppm = ppm, .signal_cost_ns = signal_cost_ns, .floor = floor,
                         .ceiling = ceiling > floor ? ceiling : floor, .period = floor,
                         .slots = slots, .slot_limit = slots, .period_max = floor };
}

void budget_charge(budget_state *b, uint64_t handler_ns, int trap)
{
    uint64_t ns = handler_ns + b->signal_cost_ns;
    b->win_wasp_ns += ns;
    if (trap)
        b->win_trap_ns += ns;
}

static int over_share(uint64_t cpu_ns, uint64_t wasp_ns, uint32_t ppm, double share)
{
    return (double)wasp_ns * 1e6 > share * (double)ppm * (double)cpu_ns;
}

uint64_t budget_next_interval(uint64_t cpu_ns, uint64_t wasp_ns, uint64_t interval, uint32_t ppm,
                              uint64_t floor, uint64_t ceiling)
{
    if (!ppm || !cpu_ns)
        return interval < floor ? floor : interval;
    /* A thread's cost is about a fixed time per signal, so the overhead
     * falls as 1/interval: one step lands near the aim. */
    double target = (double)interval * ((double)wasp_ns * 1e6 / (double)cpu_ns) /
                    (BUDGET_AIM * (double)ppm);
    double next = interval;
    if (over_share(cpu_ns, wasp_ns, ppm, 1.0))
        next = target > interval ? target : interval;
    else if (!over_share(cpu_ns, wasp_ns, ppm, BUDGET_RECOVER))
        /* Gradually: one cheap window may be luck. */
        next = target > interval / 2.0 ? target : interval / 2.0;
    if (next < (double)floor)
        return floor;
    if (next > (double)ceiling)
        return ceiling;
    return (uint64_t)next;
}

int budget_next_slots(uint64_t cpu_ns, uint64_t wasp_ns, uint64_t trap_ns, int limit, int slots,
                      uint32_t ppm)
{
    if (!ppm || !cpu_ns)
        return slots;
    if (over_share(cpu_ns, wasp_ns, ppm, 1.0))
        return trap_ns * 4 >= wasp_ns && limit > 1 ? limit - 1 : limit;
    if (!over_share(cpu_ns, wasp_ns, ppm, BUDGET_RECOVER) && limit < slots)
        return limit + 1;
    return limit;
}

void budget_flush(budget_state *b)
{
    b->cpu_ns += b->win_cpu_ns;
    b->wasp_ns += b->win_wasp_ns;
    if (b->period > b->floor)
        b->cut_ns += b->win_cpu_ns;
    b->periods_milli += (uint64_t)((double)b->win_cpu_ns * 1000.0 / (double)b->period);
    b->win_samples = 0;
    b->win_cpu_ns = b->win_wasp_ns = b->win_trap_ns = 0;
}

void budget_fold(budget_state *into, const budget_state *from)
{
    budget_state f = *from;
    budget_flush(&f);
    into->cpu_ns += f.cpu_ns;
    into->wasp_ns += f.wasp_ns;
    into->cut_ns += f.cut_ns;
    into->periods_milli += f.periods_milli;
    if (f.period_max > into->period_max)
        into->period_max = f.period_max;
}

uint64_t budget_sample(budget_state *b, uint64_t cpu_ns)
{
    b->win_cpu_ns += cpu_ns;
    if (++b->win_samples < BUDGET_WINDOW)
        return 0;
    uint64_t was = b->period;
    uint64_t next = budget_next_interval(b->win_cpu_ns, b->win_wasp_ns, was, b->ppm, b->floor,
                                         b->ceiling);
    b->slot_limit = budget_next_slots(b->win_cpu_ns, b->win_wasp_ns, b->win_trap_ns,
                                      b->slot_limit, b->slots, b->ppm);
    budget_flush(b);
    b->period = next;
    if (next > b->period_max)
        b->period_max = next;
    return next != was ? next : 0;
}

uint64_t budget_mean_interval(const budget_state *b)
{
    if (!b->periods_milli)
        return b->period;
    return (uint64_t)((double)b->cpu_ns * 1000.0 / (double)b->periods_milli);
}

uint64_t budget_draw_period(uint64_t period, uint32_t draw)
{
    draw &= (1u << 24) - 1;
    return period / 2 + (uint64_t)((double)period * (double)draw / (double)(1u << 24));
}

/*
 * test_budget.c - the overhead budget's controller and accounting
 * (src/engine/budget.c): a pure function of (CPU time, wasp time,
 * interval, budget) that never goes below the requested interval,
 * converges to the budget and recovers when the thread is well under.
 */
#include "harness.h"
#include "budget.h"
#include "thread.h"

#define MS 1000000ULL
#define US 1000ULL
#define CEIL (60000ULL * MS)

/* A thread whose every sample costs cost_ns of wasp time: the overhead
 * one window at this interval shows. */
static uint64_t step(uint64_t interval, uint64_t cost_ns, uint32_t ppm, uint64_t floor)
{
    uint64_t cpu = BUDGET_WINDOW * interval, wasp = BUDGET_WINDOW * cost_ns;
    return budget_next_interval(cpu, wasp, interval, ppm, floor, CEIL);
}

TEST(over_budget_lengthens_to_the_aim)
{
    /* 100 us per sample every 1 ms is 10%; a 1% budget aimed at 0.8%
     * wants 100 us / 0.008 = 12.5 ms. */
    uint64_t next = step(1 * MS, 100 * US, 10000, 1 * MS);
    CHECK(next >= 12400 * US && next <= 12600 * US);
}

TEST(never_below_the_floor)
{
    /* Far under budget at the floor: stays there. */
    CHECK_EQ_U(step(1 * MS, 1 * US, 10000, 1 * MS), 1 * MS);
    /* Recovering from a long interval stops at the floor. */
    CHECK_EQ_U(step(3 * MS, 1 * US, 10000, 2 * MS), 2 * MS);
    /* An interval below the floor (never given by the engine) is raised. */
    CHECK_EQ_U(budget_next_interval(1000, 0, 10, 10000, 500, CEIL), 500);
    /* Nothing measured: no change. */
    CHECK_EQ_U(budget_next_interval(0, 0, 5 * MS, 10000, 1 * MS, CEIL), 5 * MS);
}

TEST(never_above_the_ceiling)
{
    /* wasp time beyond the CPU time (a bad estimate): capped. */
    CHECK_EQ_U(budget_next_interval(1 * MS, 10 * MS, 1 * MS, 10000, 1 * MS, 50 * MS), 50 * MS);
}

TEST(off_never_changes_the_interval)
{
    CHECK_EQ_U(step(100 * US, 90 * US, 0, 100 * US), 100 * US);
    CHECK_EQ_U(budget_next_slots(1000, 900, 900, 4, 4, 0), 4);
}

TEST(converges_and_stays_under)
{
    /* 40 us a sample, 2% budget, starting at the floor of 100 us. */
    uint64_t floor = 100 * US, interval = floor;
    for (int i = 0; i < 20; i++)
        interval = step(interval, 40 * US, 20000, floor);
    double overhead = 40e3 / (double)interval;
    CHECK(overhead <= 0.02);
    CHECK(overhead >= 0.02 * BUDGET_RECOVER);
    /* Stable: one more window changes nothing. */
    CHECK_EQ_U(step(interval, 40 * US, 20000, floor), interval);
}

TEST(hysteresis_between_recover_and_budget)
{
    /* At 0.7 of the budget the interval holds: neither over nor well under. */
    uint64_t interval = 10 * MS;
    uint64_t cost = (uint64_t)(0.7 * 0.02 * (double)interval);
    CHECK_EQ_U(step(interval, cost, 20000, 1 * MS), interval);
}

TEST(recovers_toward_the_floor_at_most_halving)
{
    /* The handler got cheap: 1 us a sample at a 64 ms interval. */
    uint64_t floor = 1 * MS, interval = 64 * MS;
    uint64_t next = step(interval, 1 * US, 20000, floor);
    CHECK_EQ_U(next, 32 * MS);
    int windows = 1;
    while (next > floor && windows < 20) {
        next = step(next, 1 * US, 20000, floor);
        windows++;
    }
    CHECK_EQ_U(next, floor);
    CHECK_EQ_U(windows, 6);   /* 64 -> 32 -> 16 -> 8 -> 4 -> 2 -> 1 */
}

TEST(fewer_watches_when_traps_are_the_cost)
{
    /* Over budget, traps a quarter or more of the cost: one slot fewer. */
    CHECK_EQ_U(budget_next_slots(1000 * US, 100 * US, 50 * US, 4, 4, 10000), 3);
    CHECK_EQ_U(budget_next_slots(1000 * US, 100 * US, 50 * US, 1, 4, 10000), 1);   /* never 0 */
    /* Over budget, but samples are the cost: the interval does the work. */
    CHECK_EQ_U(budget_next_slots(1000 * US, 100 * US, 10 * US, 4, 4, 10000), 4);
    /* Well under: one back, up to the configured slots. */
    CHECK_EQ_U(budget_next_slots(1000 * US, 1 * US, 1 * US, 2, 4, 10000), 3);
    CHECK_EQ_U(budget_next_slots(1000 * US, 1 * US, 1 * US, 4, 4, 10000), 4);
}

TEST(accounting_steps_every_window_and_keeps_totals)
{
    budget_state b;
    /* 1% budget, 20 us per signal, floor 100 us: a 10 us handler makes
     * 30 us a sample, 30% at the floor. */
    budget_init(&b, 10000, 20 * US, 100 * US, CEIL, 4);
    uint64_t changed = 0;
    for (int i = 0; i < BUDGET_WINDOW; i++) {
        budget_charge(&b, 10 * US, 0);
        changed = budget_sample(&b, b.period);
        CHECK(i == BUDGET_WINDOW - 1 || changed == 0);
    }
    CHECK(changed > 100 * US);
    CHECK_EQ_U(b.period, changed);
    CHECK_EQ_U(b.cpu_ns, BUDGET_WINDOW * 100 * US);
    CHECK_EQ_U(b.wasp_ns, BUDGET_WINDOW * 30 * US);
    CHECK_EQ_U(b.cut_ns, 0);   /* the first window ran at the floor */
    CHECK_EQ_U(budget_mean_interval(&b), 100 * US);
    /* A second window at the new period is counted as cut. */
    for (int i = 0; i < BUDGET_WINDOW; i++) {
        budget_charge(&b, 10 * US, 0);
        budget_sample(&b, b.period);
    }
    CHECK_EQ_U(b.cut_ns, BUDGET_WINDOW * changed);
    CHECK(budget_mean_interval(&b) > 100 * US && budget_mean_interval(&b) < changed);
    CHECK(b.period_max >= changed);
    /* The open window reaches the totals when flushed. */
    budget_charge(&b, 10 * US, 1);
    budget_sample(&b, b.period);
    uint64_t cpu = b.cpu_ns;
    budget_flush(&b);
    CHECK_EQ_U(b.cpu_ns, cpu + b.period);
    CHECK_EQ_U(b.win_samples, 0);
}

TEST(each_signal_costs_its_delivery_too)
{
    budget_state b;
    budget_init(&b, 10000, 20 * US, 100 * US, CEIL, 4);
    budget_charge(&b, 5 * US, 0);
    budget_charge(&b, 7 * US, 1);   /* a trap is a signal as well */
    CHECK_EQ_U(b.win_wasp_ns, 52 * US);
    CHECK_EQ_U(b.win_trap_ns, 27 * US);
}

/* A thread's context switches while sampled cost it the measured base
 * each (less as the budget lengthened its interval), plus what an armed
 * watch adds times the watches its samples left armed on average; an ended-threads profile carries its folded threads'
 * switches and charges as they were, and adds those of the next. */
TEST(switches_are_charged_by_the_watches_armed)
{
    static thread_state t, ended;
    budget_init(&t.budget, 10000, 20 * US, 100 * US, CEIL, 4);
    t.budget.switch_cost_ns = 2000;
    t.budget.switch_armed_ns = 500;
    t.switches_begun = 100;
    t.switches_seen = 1100;
    t.stats[STAT_SAMPLES] = 10;
    t.stats[STAT_ARMED_SEEN] = 25;   /* 2.5 armed at a sample, on average */
    uint64_t n, ns;
    thread_switches(&t, &n, &ns);
    CHECK_EQ_U(n, 1000);
    CHECK_EQ_U(ns, 1000 * (2000 + 1250));
    ended.stats[STAT_SWITCHES] = 50;
    ended.stats[STAT_SWITCH_NS] = 7000;
    thread_fold(&ended, &t);
    thread_switches(&ended, &n, &ns);
    CHECK_EQ_U(n, 1050);
    CHECK_EQ_U(ns, 3257000);
    t.stats[STAT_SAMPLES] = 0;       /* never sampled: no watch was ever armed */
    thread_switches(&t, &n, &ns);
    CHECK_EQ_U(ns, 1000 * 2000);
    /* The budget held it at 4 times the interval on average: the timer's
     * part of the cost (above the floor) falls to a quarter. */
    t.budget.switch_floor_ns = 1000;
    t.budget.cpu_ns = 4000 * US;
    t.budget.periods_milli = 10 * 1000;
    thread_switches(&t, &n, &ns);
    CHECK_EQ_U(ns, 1000 * 1250);
}

/* Each sample's period is drawn in [interval/2, 3 interval/2): no fixed
 * period to alias with a program's rounds, and the same mean. */
TEST(periods_are_drawn_around_the_interval)
{
    CHECK_EQ_U(budget_draw_period(MS, 0), MS / 2);
    CHECK(budget_draw_period(MS, (1u << 24) - 1) < 3 * MS / 2 && budget_draw_period(MS, (1u << 24) - 1) > 3 * MS / 2 - 10);
    CHECK_EQ_U(budget_draw_period(MS, 1u << 23), MS);
    CHECK_EQ_U(budget_draw_period(MS, (1u << 24) | (1u << 23)), MS);   /* only 24 bits count */
    uint64_t sum = 0;
    for (uint32_t k = 0; k < 4096; k++)
        sum += budget_draw_period(MS, k << 12);
    CHECK(sum / 4096 > MS - MS / 1000 && sum / 4096 < MS + MS / 1000);
}

int main(void)
{
    RUN(over_budget_lengthens_to_the_aim);
    RUN(never_below_the_floor);
    RUN(never_above_the_ceiling);
    RUN(off_never_changes_the_interval);
    RUN(converges_and_stays_under);
    RUN(hysteresis_between_recover_and_budget);
    RUN(recovers_toward_the_floor_at_most_halving);
    RUN(fewer_watches_when_traps_are_the_cost);
    RUN(accounting_steps_every_window_and_keeps_totals);
    RUN(each_signal_costs_its_delivery_too);
    RUN(switches_are_charged_by_the_watches_armed);
    RUN(periods_are_drawn_around_the_interval);
    return HARNESS_EXIT();
}

/*
 * test_merge_budget.c - the report's overhead budget across threads
 * (src/cli/merge_budget.c): max and median of the threads' estimates and
 * the whole run's share, the
 * effective mean interval, how many threads the budget cut, mixed budgets,
 * profiles from before the budget, and budget stats kept out of the sums.
 */
#include "harness.h"
#include "merge.h"
#include "out_json.h"
#include "out_text.h"

#include <stdlib.h>

/* A thread's profile holding only the budget's account. */
static profile thread_profile(prof_stat *st, int64_t tid, uint64_t ppm, uint64_t cpu, uint64_t wasp,
                              uint64_t cut, uint64_t periods_milli, uint64_t imax)
{
    static char *names[] = { "budget.ppm", "budget.signal_cost_ns", "budget.cpu_ns", "budget.wasp_ns",
                             "budget.cut_ns", "budget.periods_milli", "budget.interval_max", "samples" };
    uint64_t v[] = { ppm, 20000, cpu, wasp, cut, periods_milli, imax, 7 };
    profile p = { .pid = 1, .tid = tid, .interval = 1000000 };
    snprintf(p.mode, sizeof p.mode, "silent-store");
    snprintf(p.sampler, sizeof p.sampler, "software");
    for (int i = 0; i < 8; i++)
        st[i] = (prof_stat){ names[i], v[i] };
    p.stats = st;
    p.nstats = 8;
    p.crc = (uint64_t)tid;   /* each a different file */
    return p;
}

static char *budget_json(const merge_budget *b)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    json_write_budget(f, b);
    fclose(f);
    return buf;
}

/* One more stat in p, whose array (st) has room for it. */
static void add_stat(profile *p, const char *name, uint64_t value)
{
    p->stats[p->nstats++] = (prof_stat){ (char *)name, value };
}

/* The text report of m (malloc'd). */
static char *report_text(const merge_model *m)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    text_write_report(f, m, 10);
    fclose(f);
    return buf;
}

/* m, merged from the n profiles p. */
/* Two threads (tid, tid + 1) of 1 s of CPU each, 10 ms of it wasp's, with
 * a 2% budget: the base the tests of wasp's other costs add to. */
static void two_threads(prof_stat st[2][12], profile p[2], int64_t tid)
{
    for (int i = 0; i < 2; i++)
        p[i] = thread_profile(st[i], tid + i, 20000, 1000000000, 10000000, 0, 1000000, 1000000);
}

static void merge_all(merge_model *m, profile *p, int n)
{
    char err[256];
    merge_init(m);
    for (int i = 0; i < n; i++)
        CHECK(merge_add(m, &p[i], "t.wasp", err, sizeof err) == 0);
    merge_finish(m);
}

TEST(max_median_mean_interval_and_cuts)
{
    merge_model m;
    prof_stat st[4][8];
    /* Overheads 1%, 3%, 2%; the third ran 10 ms intervals, cut for half its time;
     * the fourth never ran sampled (no CPU time) and has no estimate. */
    profile p[4] = {
        thread_profile(st[0], 11, 10000, 1000000000, 10000000, 0, 1000000, 1000000),
        thread_profile(st[1], 12, 10000, 1000000000, 30000000, 0, 1000000, 1000000),
        thread_profile(st[2], 13, 10000, 2000000000, 40000000, 1000000000, 200000, 10000000),
        thread_profile(st[3], 14, 10000, 0, 0, 0, 0, 1000000),
    };
    p[1].thread_name = "worker\x1b[2J";   /* named as the terminal must not take it */
    merge_all(&m, p, 4);
    const merge_budget *b = &m.budget;
    CHECK_EQ_U(b->nthreads, 4);
    CHECK_EQ_U(b->noverheads, 3);
    CHECK(b->overhead_max > 0.0299 && b->overhead_max < 0.0301);
    /* Which thread that is, and of how much CPU time: a near-idle one reads
     * far above the rest (a JVM's Notification Thread: 836% of 6.8 us). */
    CHECK_EQ_U(b->max_tid, 12);
    CHECK_EQ_U(b->max_cpu_ns, 1000000000);
    char *text = report_text(&m);
    CHECK(strstr(text, "                  max: thread 12 \"worker\\x1b[2J\", 1000.0 ms of CPU\n") != NULL);
    free(text);
    CHECK(b->overhead_median > 0.0199 && b->overhead_median < 0.0201);
    CHECK_EQ_U(b->ppm, 10000);
    CHECK(!b->ppm_mixed);
    CHECK_EQ_U(b->threads_cut, 1);
    CHECK_EQ_U(b->interval_max, 10000000);
    /* 4 s of CPU over 2200 expected samples. */
    CHECK_EQ_U(b->mean_interval, 4000000000ULL * 1000 / 2200000);
    /* Accounts, not counters: never summed into the stats. */
    CHECK_EQ_U(merge_stat_value(&m, "budget.ppm"), 0);
    CHECK_EQ_U(merge_stat_value(&m, "samples"), 28);
    char *j = budget_json(b);
    CHECK(strstr(j, "\"percent\": 1,") != NULL);
    CHECK(strstr(j, "\"cut\": true") != NULL);
    CHECK(strstr(j, "\"threads_cut\": 1") != NULL);
    free(j);
    merge_free(&m);
}

/* A thread of 10 ms with 2.5 ms of wasp beside one of 1 s with 10 ms: the
 * short one reads 25%, the run paid 12.5 ms of 1.01 s. */
TEST(the_whole_run_s_share_beside_the_threads)
{
    merge_model m;
    prof_stat st[2][8];
    profile p[2] = {
        thread_profile(st[0], 21, 20000, 1000000000, 10000000, 0, 1000000, 1000000),
        thread_profile(st[1], 22, 20000, 10000000, 2500000, 0, 10000, 1000000),
    };
    merge_all(&m, p, 2);
    const merge_budget *b = &m.budget;
    CHECK(b->overhead_max > 0.2499 && b->overhead_max < 0.2501);
    CHECK(b->overhead_all > 0.01237 && b->overhead_all < 0.01238);   /* 12.5 / 1010 */
    char *json = budget_json(b);
    CHECK(strstr(json, "\"overhead_all\": 0.0123") != NULL);
    free(json);
    merge_free(&m);
}

/* wasp's work outside the handlers counts too: a thread's start and end
 * (lifecycle_ns) and the checkpoint thread's CPU time on its checkpoints
 * (checkpoint_ns). */
TEST(thread_costs_and_checkpoints_count_in_the_overhead)
{
    merge_model m;
    prof_stat st[2][12];
    profile p[2];
    two_threads(st, p, 31);
    add_stat(&p[0], "checkpoint_ns", 30000000);
    add_stat(&p[1], "lifecycle_ns", 5000000);
    merge_all(&m, p, 2);
    const merge_budget *b = &m.budget;
    CHECK(b->overhead_max > 0.0399 && b->overhead_max < 0.0401);       /* (10 + 30) / 1000 */
    CHECK(b->overhead_all > 0.0274 && b->overhead_all < 0.0276);       /* (40 + 15) / 2000 */
    char *json = budget_json(b);
    CHECK(strstr(json, "\"lifecycle_ns\": 5000000, \"checkpoint_ns\": 30000000") != NULL);
    free(json);
    merge_free(&m);
}

/* What wasp's events add to the threads' context switches (switch_ns)
 * counts in the overhead like its handlers' time, and the report says it
 * (a server's worker pays it per request, whatever the interval). */
TEST(switch_costs_count_in_the_overhead_and_are_said)
{
    merge_model m;
    prof_stat st[2][12];
    profile p[2];
    two_threads(st, p, 41);
    add_stat(&p[0], "switches", 40000);
    add_stat(&p[0], "switch_ns", 100000000);
    for (int i = 0; i < 2; i++) {
        add_stat(&p[i], "budget.switch_cost_ns", 2000);
        add_stat(&p[i], "budget.switch_armed_ns", 500);
    }
    merge_all(&m, p, 2);
    const merge_budget *b = &m.budget;
    CHECK(b->overhead_max > 0.1099 && b->overhead_max < 0.1101);       /* (10 + 100) / 1000 */
    CHECK(b->overhead_all > 0.0599 && b->overhead_all < 0.0601);       /* (20 + 100) / 2000 */
    char *json = budget_json(b);
    CHECK(strstr(json, "\"switches\": 40000, \"switch_ns\": 100000000, \"switch_cost_ns\": 2000, "
                       "\"switch_floor_ns\": 0, \"switch_armed_ns\": 500") != NULL);
    free(json);
    char *text = report_text(&m);
    CHECK(strstr(text, "switch costs:   100.0 ms in 40000 context switches (2.50 \xc2\xb5s each") != NULL);
    CHECK(strstr(text, "note: context switches cost 5.0% of the threads' CPU time") != NULL);
    free(text);
    merge_free(&m);
}

TEST(off_mixed_and_profiles_without_a_budget)
{
    merge_model m;
    prof_stat st[2][8];
    char err[256];
    merge_init(&m);
    profile off = thread_profile(st[0], 21, 0, 1000000, 100000, 0, 1000, 1000000);
    CHECK(merge_add(&m, &off, "a.wasp", err, sizeof err) == 0);
    merge_finish(&m);
    char *j = budget_json(&m.budget);
    CHECK(strstr(j, "\"percent\": \"off\"") != NULL);
    CHECK(strstr(j, "\"cut\": false") != NULL);
    free(j);
    merge_free(&m);

    merge_init(&m);
    profile a = thread_profile(st[0], 31, 10000, 1000000, 1000, 0, 1000, 1000000);
    profile b = thread_profile(st[1], 32, 20000, 1000000, 1000, 0, 1000, 1000000);
    CHECK(merge_add(&m, &a, "a.wasp", err, sizeof err) == 0 && merge_add(&m, &b, "b.wasp", err, sizeof err) == 0);
    merge_finish(&m);
    CHECK(m.budget.ppm_mixed);
    j = budget_json(&m.budget);
    CHECK(strstr(j, "\"percent\": null") != NULL);
    free(j);
    merge_free(&m);

    /* Written before the budget existed: no account, and null in JSON. */
    merge_init(&m);
    profile old = thread_profile(st[0], 41, 0, 0, 0, 0, 0, 0);
    old.stats = &st[0][7];   /* "samples" only */
    old.nstats = 1;
    CHECK(merge_add(&m, &old, "old.wasp", err, sizeof err) == 0);
    merge_finish(&m);
    CHECK_EQ_U(m.budget.nthreads, 0);
    j = budget_json(&m.budget);
    CHECK_STR(j, "null");
    free(j);
    merge_free(&m);
    CHECK(merge_budget_is_stat("budget.cpu_ns") && !merge_budget_is_stat("samples"));
}

/* The budget of one thread that ran at 1 ms with wasp taking 50 ms: 1,000
 * samples (standing for 1 s) and a task clock of clock_ns. */
static void clocked_thread(merge_model *m, prof_stat *st, uint64_t clock_ns)
{
    char err[256];
    merge_init(m);
    profile p = thread_profile(st, 51, 0, 1000000000, 50000000, 0, 1000000, 1000000);
    st[7].value = 1000;   /* samples */
    st[8] = (prof_stat){ "budget.clock_ns", clock_ns };   /* wasp's 50 ms included */
    p.nstats = 9;
    CHECK(merge_add(m, &p, "k.wasp", err, sizeof err) == 0);
    merge_finish(m);
}

/* A thread that spent most of its time in system calls: its task clock
 * counted 2.5 s while its samples stood for 1 s, the periods that ended in
 * the kernel having given none. */
TEST(a_task_clock_gives_the_interval_as_it_was)
{
    merge_model m;
    prof_stat st[9];
    clocked_thread(&m, st, 2550000000ULL);
    const merge_budget *b = &m.budget;
    CHECK_EQ_U(b->mean_interval, 2500000);                       /* 2.5 s over 1,000 samples, not 1 ms */
    CHECK(b->overhead_max > 0.0199 && b->overhead_max < 0.0201); /* 50 ms of 2.5 s, not of 1 s */
    double u = merge_budget_unsampled(b, 1000000);               /* (2.5 - 1 - 0.001) / 2.5 */
    CHECK(u > 0.5995 && u < 0.5997);
    char *j = budget_json(b);
    CHECK(strstr(j, "\"clock_ns\": 2500000000") != NULL && strstr(j, "\"threads_clocked\": 1") != NULL);
    free(j);
    merge_free(&m);

    /* A clock below the periods' account (wasp's signal cost overestimated)
     * leaves the periods' interval; nothing unsampled. */
    clocked_thread(&m, st, 1020000000ULL);
    CHECK_EQ_U(m.budget.mean_interval, 1000000);
    CHECK(merge_budget_unsampled(&m.budget, 1000000) == 0);
    merge_free(&m);
}

int main(void)
{
    RUN(max_median_mean_interval_and_cuts);
    RUN(a_task_clock_gives_the_interval_as_it_was);
    RUN(the_whole_run_s_share_beside_the_threads);
    RUN(off_mixed_and_profiles_without_a_budget);
    RUN(thread_costs_and_checkpoints_count_in_the_overhead);
    RUN(switch_costs_count_in_the_overhead_and_are_said);
    return HARNESS_EXIT();
}

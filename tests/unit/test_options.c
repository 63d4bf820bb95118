/*
 * test_options.c - the option language shared by WASP_OPTIONS and the agent.
 */
#include "harness.h"
#include "options.h"

TEST(defaults_then_overrides)
{
    wasp_options o;
    char err[256];
    options_defaults(&o);
    CHECK(o.mode == MODE_SILENT_STORE);
    CHECK_EQ_U(o.interval_ns, OPTIONS_DEFAULT_INTERVAL_NS);
    CHECK(options_parse("mode=dead-store,interval=250us,slots=2,fp-tolerance=0.05,dir=/tmp/x", &o, err, sizeof(err)) == 0);
    CHECK(o.mode == MODE_DEAD_STORE);
    CHECK_EQ_U(o.interval_ns, 250000);
    CHECK_EQ_U(o.slots, 2);
    CHECK(o.fp_tolerance > 0.049 && o.fp_tolerance < 0.051);
    CHECK_STR(o.dir, "/tmp/x");
}

TEST(durations_take_units)
{
    uint64_t ns;
    CHECK(options_parse_duration("5ms", &ns) == 0 && ns == 5000000);
    CHECK(options_parse_duration("1.5ms", &ns) == 0 && ns == 1500000);
    CHECK(options_parse_duration("1s", &ns) == 0 && ns == 1000000000);
    CHECK(options_parse_duration("700", &ns) == 0 && ns == 700);
    CHECK(options_parse_duration("5 ms", &ns) < 0);
    CHECK(options_parse_duration("-1ms", &ns) < 0);
    CHECK(options_parse_duration("ms", &ns) < 0);
    CHECK(options_parse_duration("3h", &ns) < 0);
}

/* An attached run's length: a unit is required (30 would be 30 ns, surely
 * not meant), minutes to days accepted, 1 ms to 7 days. */
TEST(run_lengths_need_a_unit_and_stay_in_range)
{
    uint64_t ns = 0;
    wasp_options o;
    char err[256] = "";
    CHECK(options_parse_run_length("30s", &ns) == 0 && ns == 30000000000ULL);
    CHECK(options_parse_run_length("2m", &ns) == 0 && ns == 120000000000ULL);
    CHECK(options_parse_run_length("1.5h", &ns) == 0 && ns == 5400000000000ULL);
    CHECK(options_parse_run_length("7d", &ns) == 0 && ns == OPTIONS_MAX_DURATION_NS);
    CHECK(options_parse_run_length("1ms", &ns) == 0 && ns == 1000000);
    CHECK(options_parse_run_length("30", &ns) < 0);
    CHECK(options_parse_run_length("0s", &ns) < 0);
    CHECK(options_parse_run_length("999us", &ns) < 0);
    CHECK(options_parse_run_length("8d", &ns) < 0);
    CHECK(options_parse_run_length("99999999999999999999d", &ns) < 0);
    options_defaults(&o);
    CHECK(o.duration_ns == 0 && o.attached == 0);
    CHECK(options_parse("duration=5s", &o, err, sizeof(err)) == 0 && o.duration_ns == 5000000000ULL);
}

static void check_rejected(const char *text, const char *needle)
{
    wasp_options o;
    char err[256] = "";
    options_defaults(&o);
    CHECK(options_parse(text, &o, err, sizeof(err)) < 0);
    if (!strstr(err, needle))
        fprintf(stderr, "  message for '%s' lacks '%s': %s\n", text, needle, err);
    CHECK(strstr(err, needle) != NULL);
}

TEST(bad_input_is_named_in_the_message)
{
    check_rejected("mode=fast", "unknown mode 'fast'");
    check_rejected("interval=5", "bad interval '5'");       /* 5 ns: below the 100us floor */
    check_rejected("interval=10us", "bad interval '10us'"); /* livelocked /bin/true */
    check_rejected("interval=99us", "from 100us to 60s");
    check_rejected("interval=soon", "bad interval 'soon'");
    check_rejected("slots=5", "bad slots '5'");
    check_rejected("slots=", "bad slots ''");
    check_rejected("fp-tolerance=2", "bad fp-tolerance '2'");
    /* The whole line, so that a mangled dash (UTF-8 encoded twice) shows. */
    check_rejected("colour=red", "unknown option 'colour' \u2014 known: mode,");
    check_rejected("mode", "has no value");
}

TEST(flush_period_or_off)
{
    wasp_options o;
    char err[256];
    options_defaults(&o);
    CHECK_EQ_U(o.flush_ns, 10000000000ULL);   /* 10 s by default */
    CHECK(options_parse("flush=5s", &o, err, sizeof(err)) == 0 && o.flush_ns == 5000000000ULL);
    CHECK(options_parse("flush=1500ms", &o, err, sizeof(err)) == 0 && o.flush_ns == 1500000000ULL);
    CHECK(options_parse("flush=3600s", &o, err, sizeof(err)) == 0 && o.flush_ns == 3600000000000ULL);
    CHECK(options_parse("flush=off", &o, err, sizeof(err)) == 0 && o.flush_ns == 0);
    /* Below a second each thread would be written too often; a bare
     * number would be nanoseconds, never what anyone means. */
    check_rejected("flush=0", "bad flush '0'");
    check_rejected("flush=999ms", "from 1s to 3600s");
    check_rejected("flush=5", "bad flush '5'");
    check_rejected("flush=3601s", "bad flush '3601s'");
    check_rejected("flush=2h", "bad flush '2h'");
    check_rejected("flush=-1s", "bad flush '-1s'");
    check_rejected("flush=", "bad flush ''");
    check_rejected("flush=on", "or off");
}

TEST(sampler_and_period)
{
    wasp_options o;
    char err[256];
    uint64_t n;
    options_defaults(&o);
    CHECK(o.sampler == SAMPLER_AUTO);
    CHECK_EQ_U(o.period, OPTIONS_DEFAULT_PERIOD);
    CHECK(options_parse("sampler=pmu,period=200k", &o, err, sizeof(err)) == 0);
    CHECK(o.sampler == SAMPLER_PMU);
    CHECK_EQ_U(o.period, 200000);
    CHECK(options_parse("sampler=software,period=5m", &o, err, sizeof(err)) == 0);
    CHECK(o.sampler == SAMPLER_SOFTWARE);
    CHECK_EQ_U(o.period, 5000000);
    CHECK(options_parse("sampler=auto,period=20000", &o, err, sizeof(err)) == 0);
    CHECK(o.sampler == SAMPLER_AUTO);
    CHECK_EQ_U(o.period, 20000);
    CHECK_STR(options_sampler_name(SAMPLER_PMU), "pmu");
    CHECK(options_parse("sampler=ctimer,tick=10ms", &o, err, sizeof(err)) == 0);
    CHECK(o.sampler == SAMPLER_CTIMER);
    CHECK_STR(options_sampler_name(SAMPLER_CTIMER), "ctimer");
    CHECK_EQ_U(o.tick_ns, 10000000);
    options_defaults(&o);
    CHECK_EQ_U(o.tick_ns, OPTIONS_DEFAULT_TICK_NS);
    check_rejected("tick=often", "bad tick 'often'");
    CHECK(options_parse_count("1.5M", &n) == 0 && n == 1500000);
    CHECK(options_parse_count("2K", &n) == 0 && n == 2000);
    CHECK(options_parse_count("0.5", &n) < 0);       /* not a whole count */
    CHECK(options_parse_count("-3k", &n) < 0);
    CHECK(options_parse_count("3ms", &n) < 0);
    check_rejected("sampler=hw", "unknown sampler 'hw' — use auto, pmu, software or ctimer");
    check_rejected("period=999", "bad period '999'");   /* signals would swamp the program */
    check_rejected("period=lots", "bad period 'lots'");
}

TEST(stack_choice)
{
    wasp_options o;
    char err[256];
    options_defaults(&o);
    CHECK(o.stack == STACK_AUTO);   /* the front end decides */
    CHECK(options_parse("stack=exclude", &o, err, sizeof(err)) == 0);
    CHECK(o.stack == STACK_EXCLUDE);
    CHECK(options_parse("stack=include", &o, err, sizeof(err)) == 0);
    CHECK(o.stack == STACK_INCLUDE);
    CHECK_STR(options_stack_name(STACK_EXCLUDE), "exclude");
    check_rejected("stack=yes", "unknown stack 'yes'");
    check_rejected("stack=", "unknown stack ''");
}

TEST(nan_inf_and_overflow_are_refused)
{
    uint64_t ns;
    CHECK(options_parse_duration("nan", &ns) < 0);
    CHECK(options_parse_duration("nanms", &ns) < 0);
    CHECK(options_parse_duration("infs", &ns) < 0);
    CHECK(options_parse_duration("0x10ms", &ns) < 0);
    CHECK(options_parse_duration("1e3us", &ns) < 0);
    CHECK(options_parse_duration("18446744073709551616ns", &ns) < 0);
    CHECK(options_parse_duration("18446744073709551s", &ns) < 0);   /* * 1e9 overflows */
    CHECK(options_parse_duration("61s", &ns) < 0);
    CHECK(options_parse_duration("60s", &ns) == 0 && ns == 60000000000ULL);
    CHECK(options_parse_duration(".5ms", &ns) == 0 && ns == 500000);
    CHECK(options_parse_duration("1.5ns", &ns) < 0);                /* not a whole ns */
    check_rejected("interval=nan", "bad interval 'nan'");
    check_rejected("interval=nanms", "100us to 60s");
    check_rejected("fp-tolerance=nan", "bad fp-tolerance 'nan'");
    check_rejected("fp-tolerance=inf", "bad fp-tolerance 'inf'");
    check_rejected("slots=18446744073709551617", "bad slots");
}

TEST(escaped_values_keep_commas_equals_and_backslashes)
{
    wasp_options o;
    char err[256], esc[256];
    options_defaults(&o);
    CHECK(options_escape("/tmp/a,mode=dead-store b\\c", esc, sizeof esc) == 0);
    CHECK_STR(esc, "/tmp/a\\,mode\\=dead-store b\\\\c");
    char text[300];
    snprintf(text, sizeof text, "dir=%s,interval=2ms", esc);
    CHECK(options_parse(text, &o, err, sizeof err) == 0);
    CHECK_STR(o.dir, "/tmp/a,mode=dead-store b\\c");
    CHECK(o.mode == MODE_SILENT_STORE);     /* the comma did not inject an option */
    CHECK_EQ_U(o.interval_ns, 2000000);
    CHECK(options_escape("abc", esc, 3) < 0);  /* no room for the NUL */
    check_rejected("dir=a\\", "lone backslash");
    check_rejected("duration=30", "bad duration '30'");
}

TEST(budget_takes_percentages_and_off)
{
    wasp_options o;
    char err[256];
    uint32_t ppm;
    options_defaults(&o);
    CHECK_EQ_U(o.budget_ppm, 20000);   /* 2% unless told */
    CHECK(options_parse("budget=1%", &o, err, sizeof(err)) == 0);
    CHECK_EQ_U(o.budget_ppm, 10000);
    CHECK(options_parse("budget=0.5%", &o, err, sizeof(err)) == 0);
    CHECK_EQ_U(o.budget_ppm, 5000);
    CHECK(options_parse("budget=3", &o, err, sizeof(err)) == 0);   /* a bare number is percent */
    CHECK_EQ_U(o.budget_ppm, 30000);
    CHECK(options_parse("budget=100%", &o, err, sizeof(err)) == 0);
    CHECK_EQ_U(o.budget_ppm, 1000000);
    CHECK(options_parse("budget=off", &o, err, sizeof(err)) == 0);
    CHECK_EQ_U(o.budget_ppm, 0);
    CHECK(options_parse_budget("0.0001%", &ppm) == 0 && ppm == 1);
    CHECK(options_parse_budget("0.00001%", &ppm) < 0);
    CHECK(options_parse("signal-cost=25us", &o, err, sizeof(err)) == 0);
    CHECK_EQ_U(o.signal_cost_ns, 25000);
    CHECK(options_parse("switch-cost=2.5us,switch-armed-cost=400ns,switch-floor-cost=1us", &o, err,
                        sizeof(err)) == 0);
    CHECK_EQ_U(o.switch_cost_ns, 2500);
    CHECK_EQ_U(o.switch_armed_ns, 400);
    CHECK_EQ_U(o.switch_floor_ns, 1000);
}

TEST(bad_budgets_are_named_in_the_message)
{
    check_rejected("budget=0", "bad budget '0'");
    check_rejected("budget=0%", "bad budget '0%'");
    check_rejected("budget=150%", "bad budget '150%'");
    check_rejected("budget=abc", "bad budget 'abc'");
    check_rejected("budget=-1%", "bad budget '-1%'");
    check_rejected("budget=2%%", "bad budget '2%%'");
    check_rejected("budget=nan", "bad budget 'nan'");
    check_rejected("budget= 2%", "bad budget ' 2%'");
    check_rejected("budget=", "or off");
    check_rejected("signal-cost=soon", "bad signal-cost 'soon'");
    check_rejected("switch-cost=2s", "bad switch-cost '2s'");
    check_rejected("switch-armed-cost=", "bad switch-armed-cost ''");
    check_rejected("switch-floor-cost=-1us", "bad switch-floor-cost '-1us'");
}

int main(void)
{
    RUN(budget_takes_percentages_and_off);
    RUN(bad_budgets_are_named_in_the_message);
    RUN(nan_inf_and_overflow_are_refused);
    RUN(escaped_values_keep_commas_equals_and_backslashes);
    RUN(defaults_then_overrides);
    RUN(durations_take_units);
    RUN(run_lengths_need_a_unit_and_stay_in_range);
    RUN(bad_input_is_named_in_the_message);
    RUN(flush_period_or_off);
    RUN(sampler_and_period);
    RUN(stack_choice);
    return HARNESS_EXIT();
}

/*
 * test_pmu_events.c - which hardware memory event wasp picks, from fake
 * sysfs trees laid out as Intel and AMD kernels show them, and the words it
 * uses when there is none.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include "harness.h"
#include "fake_sysfs.h"
#include "access.h"
#include "pmu_events.h"

#define ST (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR)

TEST(format_strings_place_value_bits)
{
    uint64_t cfg[3] = { 0, 0, 0 };
    CHECK(pmu_format_apply("config:0-7", 0xd0, cfg) == 0);
    CHECK(pmu_format_apply("config:8-15", 0x82, cfg) == 0);
    CHECK_EQ_U(cfg[0], 0x82d0);
    CHECK(pmu_format_apply("config1:0-15", 3, cfg) == 0);
    CHECK_EQ_U(cfg[1], 3);
    CHECK(pmu_format_apply("config2:0", 1, cfg) == 0);
    CHECK_EQ_U(cfg[2], 1);
    /* AMD's split event field: low byte at 0-7, the next nibble at 32-35. */
    uint64_t amd[3] = { 0, 0, 0 };
    CHECK(pmu_format_apply("config:0-7,32-35", 0x1d0, amd) == 0);
    CHECK_EQ_U(amd[0], 0x1000000d0ULL);
    uint64_t full[3] = { 0, 0, 0 };
    CHECK(pmu_format_apply("config1:0-63", ~0ULL, full) == 0);
    CHECK_EQ_U(full[1], ~0ULL);
}

TEST(bad_formats_and_oversized_values_are_refused)
{
    uint64_t cfg[3] = { 0, 0, 0 };
    CHECK(pmu_format_apply("config:0-7", 0x100, cfg) < 0);
    CHECK(pmu_format_apply("config:19", 2, cfg) < 0);
    CHECK(pmu_format_apply("conf:0-7", 1, cfg) < 0);
    CHECK(pmu_format_apply("config3:0", 1, cfg) < 0);
    CHECK(pmu_format_apply("config:7-0", 1, cfg) < 0);
    CHECK(pmu_format_apply("config:64", 1, cfg) < 0);
    CHECK(pmu_format_apply("config:", 1, cfg) < 0);
    CHECK(pmu_format_apply("config:0-7x", 1, cfg) < 0);
}

TEST(event_terms_are_encoded_with_the_pmus_formats)
{
    uint64_t cfg[3];
    char err[256] = "";
    const char *root = fake_begin();
    fake_intel_core("cpu", "skylake");
    CHECK(pmu_events_encode(root, "cpu", "event=0xcd,umask=0x1,ldlat=3", cfg, err, sizeof(err)) == 0);
    CHECK_EQ_U(cfg[0], 0x1cd);
    CHECK_EQ_U(cfg[1], 3);
    CHECK(pmu_events_encode(root, "cpu", "event=0x3c,any", cfg, err, sizeof(err)) == 0);
    CHECK_EQ_U(cfg[0], 0x3c | 1ULL << 21);
    CHECK(pmu_events_encode(root, "cpu", "event=0xd0,colour=3", cfg, err, sizeof(err)) < 0);
    CHECK(strstr(err, "no format for 'colour'") != NULL);
    CHECK(pmu_events_encode(root, "cpu", "event=zz", cfg, err, sizeof(err)) < 0);
    CHECK(strstr(err, "bad value 'zz'") != NULL);
    CHECK(pmu_events_encode(root, "cpu", "umask=0x1ff", cfg, err, sizeof(err)) < 0);
    fake_end();
}

TEST(intel_store_modes_use_mem_stores)
{
    pmu_event ev[PMU_MAX_CANDIDATES];
    const char *root = fake_begin();
    fake_software_pmus();
    fake_intel_core("cpu", "skylake");
    /* mem-stores is MEM_INST_RETIRED.ALL_STORES here: the raw encoding of
     * the same event is not offered twice. */
    CHECK_EQ_U(pmu_events_select(root, ACCESS_STORE, ev, PMU_MAX_CANDIDATES, NULL, 0), 1);
    CHECK_STR(ev[0].name, "cpu/mem-stores/");
    CHECK_STR(ev[0].pmu, "cpu");
    CHECK(ev[0].kind == PMU_PEBS);
    CHECK_EQ_U(ev[0].type, 0x7ffffff0);
    CHECK_EQ_U(ev[0].config, 0x82d0);
    CHECK_EQ_U(ev[0].config1, 0);
    CHECK_EQ_U(ev[0].precise_ip, 2);
    CHECK_EQ_U(ev[0].exclude_kernel, 1);
    CHECK_EQ_U(ev[0].sample_type, ST);
    CHECK_EQ_U(ev[0].stores, 1);
    fake_end();
}

TEST(intel_silent_load_uses_load_events)
{
    pmu_event ev[PMU_MAX_CANDIDATES];
    const char *root = fake_begin();
    fake_intel_core("cpu", "skylake");
    CHECK_EQ_U(pmu_events_select(root, ACCESS_LOAD, ev, PMU_MAX_CANDIDATES, NULL, 0), 2);
    CHECK_STR(ev[0].name, "cpu/mem-loads/");
    CHECK_EQ_U(ev[0].config, 0x1cd);
    CHECK_EQ_U(ev[0].config1, 3);        /* ldlat=3 */
    CHECK_EQ_U(ev[0].stores, 0);
    CHECK_STR(ev[1].name, "cpu/event=0xd0,umask=0x81/");   /* MEM_INST_RETIRED.ALL_LOADS */
    CHECK_EQ_U(ev[1].config, 0x81d0);
    fake_end();
}

TEST(mem_loads_that_need_an_aux_group_is_skipped)
{
    pmu_event ev[PMU_MAX_CANDIDATES];
    const char *root = fake_begin();
    fake_intel_core("cpu", "sapphire_rapids");
    fake_file("cpu/events/mem-loads-aux", "event=0x03,umask=0x82");
    CHECK_EQ_U(pmu_events_select(root, ACCESS_LOAD, ev, PMU_MAX_CANDIDATES, NULL, 0), 1);
    CHECK_EQ_U(ev[0].config, 0x81d0);
    fake_end();
}

TEST(hybrid_intel_uses_the_p_core_pmu)
{
    pmu_event ev[PMU_MAX_CANDIDATES];
    const char *root = fake_begin();
    fake_intel_core("cpu_core", "alderlake_hybrid");
    fake_intel_core("cpu_atom", "alderlake_hybrid");
    CHECK(pmu_events_select(root, ACCESS_STORE, ev, PMU_MAX_CANDIDATES, NULL, 0) >= 1);
    CHECK_STR(ev[0].pmu, "cpu_core");
    CHECK_STR(ev[0].name, "cpu_core/mem-stores/");
    fake_end();
}

TEST(a_broken_named_event_falls_back_to_the_raw_encoding)
{
    pmu_event ev[PMU_MAX_CANDIDATES];
    const char *root = fake_begin();
    fake_intel_core("cpu", "icelake");
    fake_file("cpu/events/mem-stores", "event=0xd0,umask=0x82,newterm=1");
    CHECK_EQ_U(pmu_events_select(root, ACCESS_STORE, ev, PMU_MAX_CANDIDATES, NULL, 0), 1);
    CHECK_STR(ev[0].name, "cpu/event=0xd0,umask=0x82/");
    CHECK_EQ_U(ev[0].config, 0x82d0);
    fake_end();
}

TEST(amd_uses_ibs_op_for_every_mode)
{
    pmu_event ev[PMU_MAX_CANDIDATES];
    const char *root = fake_begin();
    fake_software_pmus();
    fake_amd(1);
    for (int k = 0; k < 2; k++) {
        CHECK_EQ_U(pmu_events_select(root, k ? ACCESS_LOAD : ACCESS_STORE, ev, PMU_MAX_CANDIDATES, NULL, 0), 1);
        CHECK(ev[0].kind == PMU_IBS);
        CHECK_STR(ev[0].name, "ibs_op/cnt_ctl=1,swfilt=1/");
        CHECK_EQ_U(ev[0].config, 1ULL << 19);   /* count ops, not cycles */
        CHECK_EQ_U(ev[0].config2, 1);           /* kernel samples filtered in software */
        CHECK_EQ_U(ev[0].exclude_kernel, 1);
        CHECK_EQ_U(ev[0].precise_ip, 0);
        CHECK_EQ_U(ev[0].sample_type, ST);
        CHECK_EQ_U(ev[0].stores, (uint64_t)-1);
    }
    fake_end();
}

TEST(ibs_without_swfilt_cannot_exclude_the_kernel)
{
    pmu_event ev[PMU_MAX_CANDIDATES];
    const char *root = fake_begin();
    fake_amd(0);
    CHECK_EQ_U(pmu_events_select(root, ACCESS_STORE, ev, PMU_MAX_CANDIDATES, NULL, 0), 1);
    CHECK_STR(ev[0].name, "ibs_op/cnt_ctl=1/");
    CHECK_EQ_U(ev[0].config2, 0);
    CHECK_EQ_U(ev[0].exclude_kernel, 0);
    fake_end();
}

TEST(no_pmu_says_so_and_names_the_fix)
{
    pmu_event ev[PMU_MAX_CANDIDATES];
    char why[512] = "";
    const char *root = fake_begin();
    fake_software_pmus();
    CHECK_EQ_U(pmu_events_select(root, ACCESS_STORE, ev, PMU_MAX_CANDIDATES, why, sizeof(why)), 0);
    CHECK(strstr(why, "no hardware PMU") != NULL);
    CHECK(strstr(why, "breakpoint software tracepoint") != NULL);
    CHECK(strstr(why, "bare metal") != NULL);
    fake_end();
    /* a root that does not exist at all */
    CHECK_EQ_U(pmu_events_select("/nonexistent/wasp", ACCESS_LOAD, ev, PMU_MAX_CANDIDATES, why, sizeof(why)), 0);
    CHECK(strstr(why, "no hardware PMU") != NULL);
}

TEST(a_core_pmu_without_memory_sampling_is_named)
{
    pmu_event ev[PMU_MAX_CANDIDATES];
    char why[512] = "";
    const char *root = fake_begin();
    fake_file("cpu/type", FAKE_TYPE);   /* an AMD guest: core PMU passed through, IBS not */
    fake_file("cpu/format/event", "config:0-7,32-35");
    CHECK_EQ_U(pmu_events_select(root, ACCESS_STORE, ev, PMU_MAX_CANDIDATES, why, sizeof(why)), 0);
    CHECK(strstr(why, "no ibs_op PMU") != NULL);
    fake_end();
    root = fake_begin();
    fake_intel_core("cpu", "sandybridge");
    fake_file("cpu/caps/max_precise", "1");
    CHECK_EQ_U(pmu_events_select(root, ACCESS_STORE, ev, PMU_MAX_CANDIDATES, why, sizeof(why)), 0);
    CHECK(strstr(why, "max_precise") != NULL);
    fake_end();
}

TEST(pmu_list_is_sorted)
{
    char buf[256];
    const char *root = fake_begin();
    fake_software_pmus();
    fake_amd(1);
    CHECK_EQ_U(pmu_events_list(root, buf, sizeof(buf)), 6);
    CHECK_STR(buf, "breakpoint cpu ibs_fetch ibs_op software tracepoint");
    fake_end();
    CHECK(pmu_events_list("/nonexistent/wasp", buf, sizeof(buf)) < 0);
}

TEST(kernel_versions_compare)
{
    CHECK(pmu_kernel_at_least("6.18.44-fc-v595", 6, 1));
    CHECK(pmu_kernel_at_least("6.1.0-13-amd64", 6, 1));
    CHECK(pmu_kernel_at_least("7.0", 6, 1));
    CHECK(!pmu_kernel_at_least("6.0.9", 6, 1));
    CHECK(!pmu_kernel_at_least("5.15.0-91-generic", 6, 1));
    CHECK(!pmu_kernel_at_least("unknown", 6, 1));
}

TEST(open_errors_name_cause_and_fix)
{
    pmu_event intel = { .name = "cpu/mem-stores/", .precise_ip = 2, .exclude_kernel = 1 };
    pmu_event ibs = { .name = "ibs_op/cnt_ctl=1/", .exclude_kernel = 0 };
    char buf[600];
    pmu_explain_open_error(&intel, EACCES, 3, buf, sizeof(buf));
    CHECK(strstr(buf, "not permitted") && strstr(buf, "perf_event_paranoid is 3") &&
          strstr(buf, "CAP_PERFMON"));
    pmu_explain_open_error(&ibs, EACCES, 2, buf, sizeof(buf));
    CHECK(strstr(buf, "swfilt") && strstr(buf, "<= 1"));
    pmu_explain_open_error(&intel, EOPNOTSUPP, 2, buf, sizeof(buf));
    CHECK(strstr(buf, "refused cpu/mem-stores/ with precise_ip 2") &&
          strstr(buf, "perf record -e cpu/mem-stores/pp -- true"));
    pmu_explain_open_error(&intel, EBUSY, 2, buf, sizeof(buf));
    CHECK(strstr(buf, "nmi_watchdog") != NULL);
    pmu_explain_open_error(&intel, EMFILE, -2, buf, sizeof(buf));
    CHECK(strstr(buf, "unknown") != NULL);
}

int main(void)
{
    RUN(format_strings_place_value_bits);
    RUN(bad_formats_and_oversized_values_are_refused);
    RUN(event_terms_are_encoded_with_the_pmus_formats);
    RUN(intel_store_modes_use_mem_stores);
    RUN(intel_silent_load_uses_load_events);
    RUN(mem_loads_that_need_an_aux_group_is_skipped);
    RUN(hybrid_intel_uses_the_p_core_pmu);
    RUN(a_broken_named_event_falls_back_to_the_raw_encoding);
    RUN(amd_uses_ibs_op_for_every_mode);
    RUN(ibs_without_swfilt_cannot_exclude_the_kernel);
    RUN(no_pmu_says_so_and_names_the_fix);
    RUN(a_core_pmu_without_memory_sampling_is_named);
    RUN(pmu_list_is_sorted);
    RUN(kernel_versions_compare);
    RUN(open_errors_name_cause_and_fix);
    return HARNESS_EXIT();
}

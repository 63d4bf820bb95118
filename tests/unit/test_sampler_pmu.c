/*
 * test_sampler_pmu.c - the choice between the PMU and the software sampler
 * (forced failures through fake sysfs trees whose events cannot open), and
 * how one PMU sample becomes a memory access.
 */
#include "harness.h"
#include "fake_sysfs.h"
#include "decode.h"
#include "sampler.h"
#include "sampler_pmu.h"

static const sampler *select_for(const char *root, enum wasp_sampler which, enum wasp_mode mode,
                                 char *why, size_t len)
{
    wasp_options o;
    options_defaults(&o);
    o.sampler = which;
    o.mode = mode;
    return sampler_select(&o, root, why, len);
}

TEST(auto_without_a_pmu_falls_back_to_software_and_says_why)
{
    char why[512];
    const char *root = fake_begin();
    fake_software_pmus();
    CHECK(select_for(root, SAMPLER_AUTO, MODE_SILENT_STORE, why, sizeof(why)) == &sampler_ctimer);
    CHECK(strstr(why, "no hardware PMU") != NULL);
    CHECK(strstr(why, " — ") != NULL);   /* a cause, then the fix */
    fake_end();
}

/* At the default 10 ms interval auto's software sampler is the CPU-time
 * timer, which context switches do not touch; below 10 ms the task clock,
 * whose samples come at any interval, not on the kernel's ticks. */
TEST(auto_software_sampler_is_the_cpu_timer_from_10ms_up)
{
    char why[512];
    wasp_options o;
    const char *root = fake_begin();
    fake_software_pmus();
    options_defaults(&o);
    CHECK(sampler_select(&o, root, why, sizeof(why)) == &sampler_ctimer);
    o.interval_ns = CTIMER_MIN_INTERVAL_NS - 1;
    CHECK(sampler_select(&o, root, why, sizeof(why)) == &sampler_software);
    o.interval_ns = 1000000;
    CHECK(sampler_select(&o, root, why, sizeof(why)) == &sampler_software);
    o.sampler = SAMPLER_CTIMER;   /* asked for: at any interval */
    CHECK(sampler_select(&o, root, why, sizeof(why)) == &sampler_ctimer);
    CHECK_STR(why, "");
    fake_end();
}

TEST(pmu_without_a_pmu_is_refused)
{
    char why[512];
    const char *root = fake_begin();
    CHECK(select_for(root, SAMPLER_PMU, MODE_DEAD_STORE, why, sizeof(why)) == NULL);
    CHECK(strstr(why, "no hardware PMU") != NULL);
    fake_end();
}

TEST(software_is_taken_as_asked_without_a_word)
{
    char why[512] = "x";
    const char *root = fake_begin();
    fake_intel_core("cpu", "skylake");
    CHECK(select_for(root, SAMPLER_SOFTWARE, MODE_SILENT_STORE, why, sizeof(why)) == &sampler_software);
    CHECK_STR(why, "");
    fake_end();
}

TEST(an_event_the_kernel_refuses_falls_back_with_its_name)
{
    char why[512];
    const char *root = fake_begin();
    fake_intel_core("cpu", "skylake");
    /* The fake type opens nowhere: the "event unsupported" path. */
    CHECK(select_for(root, SAMPLER_AUTO, MODE_SILENT_STORE, why, sizeof(why)) == &sampler_ctimer);
    CHECK(strstr(why, "refused cpu/mem-stores/") != NULL);
    CHECK(strstr(why, "perf record -e cpu/mem-stores/pp") != NULL);
    /* silent-load asks for load events: the first one is named */
    CHECK(select_for(root, SAMPLER_AUTO, MODE_SILENT_LOAD, why, sizeof(why)) == &sampler_ctimer);
    CHECK(strstr(why, "cpu/mem-loads/") != NULL);
    CHECK(select_for(root, SAMPLER_PMU, MODE_SILENT_LOAD, why, sizeof(why)) == NULL);
    fake_end();
}

TEST(amd_ibs_failure_is_named)
{
    char why[512];
    const char *root = fake_begin();
    fake_amd(1);
    CHECK(select_for(root, SAMPLER_AUTO, MODE_SILENT_STORE, why, sizeof(why)) == &sampler_ctimer);
    /* "refused ibs_op/..." here; "does not report IBS data addresses" before Linux 6.1 */
    CHECK(strstr(why, "IBS") != NULL || strstr(why, "ibs_op") != NULL);
    fake_end();
}

/* Instructions to decode, as the sample IP would point at them. */
static const uint8_t store32[] = { 0x89, 0x07, 0x90 };              /* mov %eax,(%rdi) */
static const uint8_t storesd[] = { 0xf2, 0x0f, 0x11, 0x00, 0x90 };  /* movsd %xmm0,(%rax) */
static const uint8_t load64[] = { 0x48, 0x8b, 0x07, 0x90 };        /* mov (%rdi),%rax */
static const uint8_t nop[] = { 0x90, 0x90 };

static ringbuf_sample sample_at(const uint8_t *code, uint64_t addr)
{
    ringbuf_sample s;
    memset(&s, 0, sizeof(s));
    s.ip = (uint64_t)(uintptr_t)code;
    s.addr = addr;
    s.pid = s.tid = 42;
    s.misc = PERF_RECORD_MISC_USER | PERF_RECORD_MISC_EXACT_IP;
    return s;
}

TEST(a_sample_takes_its_address_from_the_hardware_and_its_width_from_the_code)
{
    ucontext_t uc;
    mem_access a;
    memset(&uc, 0, sizeof(uc));   /* registers are not used for the address */
    ringbuf_sample s = sample_at(store32, 0x7fff1230);
    CHECK(pmu_sample_access(&s, 42, &uc, &a) == DROP_NONE);
    CHECK_EQ_U(a.pc, (uintptr_t)store32);
    CHECK_EQ_U(a.addr, 0x7fff1230);
    CHECK_EQ_U(a.size, 4);
    CHECK_EQ_U(a.kind, ACCESS_STORE);
    CHECK_EQ_U(a.fp, ACCESS_INT);
    s = sample_at(storesd, 0x5008);
    CHECK(pmu_sample_access(&s, 42, &uc, &a) == DROP_NONE);
    CHECK_EQ_U(a.size, 8);
    CHECK_EQ_U(a.fp, ACCESS_F64);
    s = sample_at(load64, 0x6000);
    CHECK(pmu_sample_access(&s, 42, &uc, &a) == DROP_NONE);
    CHECK_EQ_U(a.kind, ACCESS_LOAD);
    CHECK_EQ_U(a.addr, 0x6000);
}

TEST(unusable_samples_are_dropped_with_a_reason)
{
    ucontext_t uc;
    mem_access a;
    memset(&uc, 0, sizeof(uc));
    ringbuf_sample s = sample_at(store32, 0x1000);
    CHECK(pmu_sample_access(&s, 43, &uc, &a) == DROP_NO_RECORD);         /* another thread's */
    s.misc = PERF_RECORD_MISC_USER;
    CHECK(pmu_sample_access(&s, 42, &uc, &a) == DROP_INEXACT_IP);        /* IP not exact */
    s.misc = PERF_RECORD_MISC_KERNEL | PERF_RECORD_MISC_EXACT_IP;
    CHECK(pmu_sample_access(&s, 42, &uc, &a) == DROP_INEXACT_IP);        /* IBS kernel sample */
    s = sample_at(store32, 0);
    CHECK(pmu_sample_access(&s, 42, &uc, &a) == DROP_ADDR_UNKNOWN);      /* no data address */
    s = sample_at(nop, 0x1000);
    CHECK(pmu_sample_access(&s, 42, &uc, &a) == DROP_NOT_MEMORY);        /* IBS: a non-memory op */
    s = sample_at(store32, 0x1000);
    s.ip = 0xffffffff81000000ULL;
    CHECK(pmu_sample_access(&s, 42, &uc, &a) == DROP_INEXACT_IP);
}

int main(void)
{
    if (decode_init() < 0)
        return 1;
    RUN(auto_without_a_pmu_falls_back_to_software_and_says_why);
    RUN(auto_software_sampler_is_the_cpu_timer_from_10ms_up);
    RUN(pmu_without_a_pmu_is_refused);
    RUN(software_is_taken_as_asked_without_a_word);
    RUN(an_event_the_kernel_refuses_falls_back_with_its_name);
    RUN(amd_ibs_failure_is_named);
    RUN(a_sample_takes_its_address_from_the_hardware_and_its_width_from_the_code);
    RUN(unusable_samples_are_dropped_with_a_reason);
    return HARNESS_EXIT();
}

/*
 * sampler_pmu.c - hardware address sampling: Intel PEBS and AMD IBS.
 *
 * Each thread gets one precise memory event (chosen by pmu_events.c) that
 * overflows every `period` events. On overflow the kernel writes a
 * PERF_RECORD_SAMPLE (IP, TID, data ADDR) into the event's ring buffer and,
 * with attr.sigtrap, sends the thread SIGTRAP carrying sig_data. The handler
 * drains the buffer and takes the newest sample: the address comes from the
 * hardware, width/kind/float type from decoding the instruction at the
 * sample IP (the access itself with PEBS precise_ip 2 and with IBS). The
 * access has retired when the signal arrives, so the watch reads the value
 * in memory right away (before_run = 0).
 *
 * wakeup_events = 1 matters: with it the kernel does not batch PEBS records
 * ("large PEBS"), so each overflow raises its own interrupt and signal.
 *
 * Written against the kernel sources and never run on a machine with a PMU:
 * docs/pmu.md lists what was and was not verified.
 */
#include "clock.h"
#include "sampler_pmu.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "decode.h"
#include "perf.h"
#include "sampler.h"

/* Process-wide: the event every thread opens, fixed by sampler_select. */
static struct {
    pmu_event ev;
    size_t page;
} pmu;

/* IBS counts in units of 16 (the low nibble of IbsOpMaxCnt does not exist)
 * and the kernel refuses periods with those bits set. */
static uint64_t pmu_period(const pmu_event *ev, uint64_t period)
{
    if (ev->kind != PMU_IBS)
        return period;
    period &= ~0xfULL;
    return period < 16 ? 16 : period;
}

int pmu_open(const pmu_event *ev, pid_t tid, uint64_t period, uint64_t sig_data)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = ev->type;
    attr.config = ev->config;
    attr.config1 = ev->config1;
    attr.config2 = ev->config2;
    attr.sample_period = pmu_period(ev, period);
    attr.sample_type = ev->sample_type;
    attr.precise_ip = (unsigned)ev->precise_ip & 3;
    attr.disabled = 1;
    attr.exclude_kernel = (unsigned)ev->exclude_kernel & 1;
    attr.exclude_hv = (unsigned)ev->exclude_kernel & 1;
    attr.wakeup_events = 1;
    attr.remove_on_exec = 1;
    attr.sigtrap = 1;
    attr.sig_data = sig_data;
    return (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static size_t pmu_page(void)
{
    if (!pmu.page)
        pmu.page = (size_t)sysconf(_SC_PAGESIZE);
    return pmu.page;
}

static size_t pmu_ring_len(void)
{
    return (1 + PMU_RING_PAGES) * pmu_page();
}

static void pmu_explain_mmap(const pmu_event *ev, int err, char *why, size_t whylen)
{
    snprintf(why, whylen, "cannot map the ring buffer of %s (%s) — raise `ulimit -l` or "
             "/proc/sys/kernel/perf_event_mlock_kb", ev->name, strerror(err));
}

int pmu_probe(const pmu_event *ev, uint64_t period, char *why, size_t whylen)
{
    struct utsname u;
    if (!ringbuf_sample_type_ok(ev->sample_type)) {
        snprintf(why, whylen, "%s asks for sample fields wasp cannot parse — a bug: report it", ev->name);
        return -1;
    }
    /* Linux 6.1 is the first to put IBS's data address in PERF_SAMPLE_ADDR;
     * before, every sample would be dropped as addr_unknown. */
    if (ev->kind == PMU_IBS && uname(&u) == 0 && !pmu_kernel_at_least(u.release, 6, 1)) {
        snprintf(why, whylen, "Linux %s does not report IBS data addresses to perf — upgrade the "
                 "kernel to 6.1 or later for hardware sampling on AMD", u.release);
        return -1;
    }
    int fd = pmu_open(ev, 0, period, 0);
    if (fd < 0) {
        int err = errno;
        pmu_explain_open_error(ev, err, pmu_read_paranoid(), why, whylen);
        return -1;
    }
    void *ring = mmap(NULL, pmu_ring_len(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int err = errno;
    close(fd);
    if (ring == MAP_FAILED) {
        pmu_explain_mmap(ev, err, why, whylen);
        return -1;
    }
    munmap(ring, pmu_ring_len());
    return 0;
}

int pmu_choose(const char *sysfs_root, uint8_t want, uint64_t period, pmu_event *chosen,
               char *why, size_t whylen)
{
    pmu_event cands[PMU_MAX_CANDIDATES];
    char reason[512];
    int n = pmu_events_select(sysfs_root, want, cands, PMU_MAX_CANDIDATES, why, whylen);
    for (int i = 0; i < n; i++) {
        if (pmu_probe(&cands[i], period, reason, sizeof(reason)) == 0) {
            *chosen = cands[i];
            return 0;
        }
        if (i == 0)
            snprintf(why, whylen, "%s", reason);
    }
    return -1;
}

enum drop_reason pmu_sample_access(const ringbuf_sample *s, pid_t tid, const ucontext_t *uc,
                                   mem_access *out)
{
    if ((pid_t)s->tid != tid)
        return DROP_NO_RECORD;
    /* Only an exact user-space IP names the accessing instruction: IBS
     * without swfilt also samples the kernel, and a PEBS IP the kernel
     * could not make exact is the next instruction. */
    if ((s->misc & PERF_RECORD_MISC_CPUMODE_MASK) != PERF_RECORD_MISC_USER ||
        !(s->misc & PERF_RECORD_MISC_EXACT_IP) || s->ip < 4096 || s->ip >= (1ULL << 57))
        return DROP_INEXACT_IP;
    /* IBS reports no address for ops that are not loads or stores, nor when
     * its linear address was not valid. */
    if (!s->addr)
        return DROP_ADDR_UNKNOWN;
    enum drop_reason r = decode_access_at(s->ip, uc, out);
    if (r != DROP_NONE)
        return r;
    out->addr = s->addr;
    return DROP_NONE;
}

static int pmu_thread_start(thread_state *t, const wasp_options *o, char *err, size_t errlen)
{
    int fd = pmu_open(&pmu.ev, t->tid, o->period, (uint64_t)t | SIG_TAG_SAMPLER);
    if (fd < 0) {
        int e = errno;
        pmu_explain_open_error(&pmu.ev, e, pmu_read_paranoid(), err, errlen);
        return -1;
    }
    void *ring = mmap(NULL, pmu_ring_len(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (ring == MAP_FAILED) {
        pmu_explain_mmap(&pmu.ev, errno, err, errlen);
        close(fd);
        return -1;
    }
    t->sampler_ring = ring;
    t->sampler_fd = fd;
    t->cpu_mark_ns = clock_ns(clock_of_thread(t->tid));   /* the adopter's, were it CLOCK_THREAD_CPUTIME_ID */
    return 0;
}

static void pmu_thread_stop(thread_state *t)
{
    void *ring = t->sampler_ring;
    if (t->sampler_fd >= 0)
        perf_enable(t->sampler_fd, 0);
    t->sampler_ring = NULL;
    if (ring)
        munmap(ring, pmu_ring_len());
    if (t->sampler_fd >= 0)
        close(t->sampler_fd);
    t->sampler_fd = -1;
}

static enum drop_reason pmu_take(thread_state *t, const siginfo_t *si, const ucontext_t *uc,
                                 const engine_frontend *fe, uint8_t want, mem_access *out, int *before_run)
{
    ringbuf_scan scan;
    uint8_t *ring = t->sampler_ring;
    (void)si;
    (void)fe;
    (void)want;   /* the event counts the wanted kind; IBS samples of other ops are
                   * dropped by the handler as wrong_kind */
    *before_run = 0;
    if (!ring)
        return DROP_NO_RECORD;
    ringbuf_consume((struct perf_event_mmap_page *)ring, ring + pmu.page,
                    (uint64_t)PMU_RING_PAGES * pmu.page, pmu.ev.sample_type, &scan);
    /* One signal per overflow, but a signal can be held back (SIGTRAP
     * blocked, throttling): older samples in the buffer are not used. */
    t->drops[DROP_RING_LOST] += scan.lost + (scan.samples > 1 ? scan.samples - 1 : 0);
    if (!scan.have_sample)
        return DROP_NO_RECORD;
    return pmu_sample_access(&scan.newest, t->tid, uc, out);
}

/* Events, not time, set the PMU sampler's pace, and the CPU-time timer
 * fires on whole ticks, not at the period asked: the budget takes the
 * thread's CPU clock, which the handler reads for its own time anyway. */
uint64_t sampler_cpu_since_mark(thread_state *t, uint64_t cpu_now)
{
    uint64_t was = t->cpu_mark_ns;
    t->cpu_mark_ns = cpu_now;
    return cpu_now > was ? cpu_now - was : 0;
}

static int pmu_set_period(thread_state *t, uint64_t period, uint64_t handler_ns)
{
    (void)handler_ns;   /* a count of events: the handler's own are not known */
    return perf_set_period(t->sampler_fd, pmu_period(&pmu.ev, period));
}

const sampler sampler_pmu = {
    .name = "pmu",
    .thread_start = pmu_thread_start,
    .thread_stop = pmu_thread_stop,
    .enable = sampler_perf_enable,
    .take = pmu_take,
    .cpu_since_sample = sampler_cpu_since_mark,
    .set_period = pmu_set_period,
};

const sampler *sampler_select(const wasp_options *o, const char *sysfs_root, char *why, size_t whylen)
{
    uint8_t want = o->mode == MODE_SILENT_LOAD ? ACCESS_LOAD : ACCESS_STORE;
    why[0] = '\0';
    if (o->sampler == SAMPLER_SOFTWARE)
        return &sampler_software;
    if (o->sampler == SAMPLER_CTIMER)
        return &sampler_ctimer;
    pmu_page();
    if (pmu_choose(sysfs_root, want, o->period, &pmu.ev, why, whylen) == 0)
        return &sampler_pmu;
    if (o->sampler == SAMPLER_PMU)
        return NULL;
    return o->interval_ns >= CTIMER_MIN_INTERVAL_NS ? &sampler_ctimer : &sampler_software;
}

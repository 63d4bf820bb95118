/*
 * pmu_events.c - picks the precise memory event for the PMU sampler from the
 * kernel's PMU descriptions in sysfs: <root>/<pmu>/type, format/, events/, caps/.
 *
 * Intel: the core PMU is "cpu" ("cpu_core" on hybrid parts). The kernel
 * names mem-stores and mem-loads in events/; their terms ("event=0xd0,
 * umask=0x82", "event=0xcd,umask=0x1,ldlat=3") are turned into config words
 * with the bit ranges in format/. MEM_INST_RETIRED.ALL_STORES/ALL_LOADS
 * (event 0xd0, umask 0x82/0x81 since Sandy Bridge; JXPerf's events) follow
 * as raw encodings. AMD: the ibs_op PMU; every op is a candidate and the
 * kernel reports the data address of memory ops. Normal context only.
 */
#include "pmu_events.h"

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "access.h"

#define PMU_SAMPLE_TYPE (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR)

/* Intel cores older than Sandy Bridge, where event 0xd0 is not a memory event. */
static const char *const pmu_pre_snb[] = { "core", "core2", "nehalem", "westmere", "bonnell" };

static int pmu_read(const char *root, const char *pmu, const char *rel, char *buf, size_t len)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s/%s", root, pmu, rel);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    return 0;
}

static int pmu_has(const char *root, const char *pmu, const char *rel)
{
    char buf[256];
    return pmu_read(root, pmu, rel, buf, sizeof(buf)) == 0;
}

static int pmu_read_number(const char *root, const char *pmu, const char *rel, long *out)
{
    char buf[64], *end;
    if (pmu_read(root, pmu, rel, buf, sizeof(buf)) < 0)
        return -1;
    errno = 0;
    *out = strtol(buf, &end, 0);
    return end == buf || *end || errno ? -1 : 0;
}

int pmu_format_apply(const char *format, uint64_t value, uint64_t cfg[3])
{
    int word, bit = 0;
    const char *p;

    if (strncmp(format, "config", 6) != 0)
        return -1;
    p = format + 6;
    word = 0;
    if (*p == '1' || *p == '2')
        word = *p++ - '0';
    if (*p++ != ':')
        return -1;
    while (*p) {
        char *end;
        long lo = strtol(p, &end, 10), hi;
        if (end == p || lo < 0 || lo > 63)
            return -1;
        hi = lo;
        p = end;
        if (*p == '-') {
            hi = strtol(p + 1, &end, 10);
            if (end == p + 1 || hi < lo || hi > 63)
                return -1;
            p = end;
        }
        for (long b = lo; b <= hi; b++, bit++)
            if (bit < 64 && (value >> bit) & 1)
                cfg[word] |= 1ULL << b;
        if (*p == ',')
            p++;
        else if (*p)
            return -1;
    }
    /* The value must fit in the bits the format gives it. */
    return bit == 0 || (bit < 64 && value >> bit) ? -1 : 0;
}

int pmu_events_encode(const char *root, const char *pmu, const char *terms, uint64_t cfg[3],
                      char *err, size_t errlen)
{
    char buf[256], format[128], rel[160];
    char *save = NULL;

    cfg[0] = cfg[1] = cfg[2] = 0;
    snprintf(buf, sizeof(buf), "%s", terms);
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '='), *end;
        uint64_t v = 1;
        if (eq) {
            *eq = '\0';
            errno = 0;
            v = strtoull(eq + 1, &end, 0);
            if (end == eq + 1 || *end || errno) {
                snprintf(err, errlen, "%s/%s: bad value '%s' for %s", pmu, terms, eq + 1, t);
                return -1;
            }
        }
        snprintf(rel, sizeof(rel), "format/%s", t);
        if (pmu_read(root, pmu, rel, format, sizeof(format)) < 0) {
            snprintf(err, errlen, "%s/%s: the PMU has no format for '%s'", pmu, terms, t);
            return -1;
        }
        if (pmu_format_apply(format, v, cfg) < 0) {
            snprintf(err, errlen, "%s/%s: '%s' does not fit format '%s'", pmu, terms, t, format);
            return -1;
        }
    }
    return 0;
}

static int pmu_compare_names(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

int pmu_events_list(const char *root, char *buf, size_t len)
{
    char names[64][64];
    int n = 0;
    DIR *d = opendir(root);
    struct dirent *e;

    if (len)
        buf[0] = '\0';
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL && n < 64) {
        if (e->d_name[0] == '.')
            continue;
        size_t l = strnlen(e->d_name, sizeof(names[0]) - 1);
        memcpy(names[n], e->d_name, l);
        names[n++][l] = '\0';
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof(names[0]), pmu_compare_names);
    size_t used = 0;
    for (int i = 0; i < n && used < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%s", i ? " " : "", names[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return n;
}

static int pmu_is_intel_core(const char *root, const char *pmu)
{
    char name[64];
    if (pmu_has(root, pmu, "events/mem-stores") || pmu_has(root, pmu, "events/mem-loads"))
        return 1;
    /* caps/pmu_name ("skylake", "alderlake_hybrid") exists on Intel only. */
    if (pmu_read(root, pmu, "caps/pmu_name", name, sizeof(name)) < 0)
        return 0;
    for (size_t i = 0; i < sizeof(pmu_pre_snb) / sizeof(pmu_pre_snb[0]); i++)
        if (strcmp(name, pmu_pre_snb[i]) == 0)
            return 0;
    return 1;
}

static int pmu_same(const pmu_event *a, const pmu_event *b)
{
    return a->type == b->type && a->config == b->config && a->config1 == b->config1 &&
           a->config2 == b->config2;
}

/* Appends ev unless an identical encoding is already there. */
static int pmu_add(pmu_event *out, int n, int max, const pmu_event *ev)
{
    for (int i = 0; i < n; i++)
        if (pmu_same(&out[i], ev))
            return n;
    if (n < max)
        out[n++] = *ev;
    return n;
}

static int pmu_add_intel(const char *root, const char *pmu, uint32_t type, uint8_t want,
                         pmu_event *out, int n, int max)
{
    const int stores = want != ACCESS_LOAD;
    const char *raw = stores ? "event=0xd0,umask=0x82" : "event=0xd0,umask=0x81";
    char terms[160], err[256];
    uint64_t cfg[3];
    pmu_event ev;

    memset(&ev, 0, sizeof(ev));
    snprintf(ev.pmu, sizeof(ev.pmu), "%s", pmu);
    ev.kind = PMU_PEBS;
    ev.type = type;
    ev.sample_type = PMU_SAMPLE_TYPE;
    /* precise_ip 2: the sample IP is the access itself (eventing IP), and
     * the data address comes from the PEBS record. */
    ev.precise_ip = 2;
    ev.exclude_kernel = 1;
    ev.stores = stores;
    /* With mem-loads-aux (Sapphire Rapids, hybrid parts) the kernel only
     * accepts mem-loads as a group with that auxiliary event: skip it. */
    if (pmu_read(root, pmu, stores ? "events/mem-stores" : "events/mem-loads", terms, sizeof(terms)) == 0 &&
        (stores || !pmu_has(root, pmu, "events/mem-loads-aux")) &&
        pmu_events_encode(root, pmu, terms, cfg, err, sizeof(err)) == 0) {
        ev.config = cfg[0], ev.config1 = cfg[1], ev.config2 = cfg[2];
        snprintf(ev.name, sizeof(ev.name), "%s/%s/", pmu, stores ? "mem-stores" : "mem-loads");
        n = pmu_add(out, n, max, &ev);
    }
    if (pmu_events_encode(root, pmu, raw, cfg, err, sizeof(err)) == 0) {
        ev.config = cfg[0], ev.config1 = cfg[1], ev.config2 = cfg[2];
        snprintf(ev.name, sizeof(ev.name), "%s/%s/", pmu, raw);
        n = pmu_add(out, n, max, &ev);
    }
    return n;
}

static int pmu_add_ibs(const char *root, uint32_t type, pmu_event *out, int n, int max)
{
    pmu_event ev;
    memset(&ev, 0, sizeof(ev));
    snprintf(ev.pmu, sizeof(ev.pmu), "ibs_op");
    ev.kind = PMU_IBS;
    ev.type = type;
    ev.sample_type = PMU_SAMPLE_TYPE;
    ev.stores = -1;
    uint64_t cfg[3] = { 0, 0, 0 };
    char format[64];
    /* cnt_ctl=1 counts dispatched ops, not cycles, so the period is in ops. */
    int cnt_ctl = pmu_read(root, "ibs_op", "format/cnt_ctl", format, sizeof(format)) == 0 &&
                  pmu_format_apply(format, 1, cfg) == 0;
    /* IBS has no hardware privilege filter: without swfilt (Linux 6.14+) the
     * kernel refuses exclude_kernel, and kernel samples need privileges. */
    int swfilt = pmu_read(root, "ibs_op", "format/swfilt", format, sizeof(format)) == 0 &&
                 pmu_format_apply(format, 1, cfg) == 0;
    ev.config = cfg[0], ev.config1 = cfg[1], ev.config2 = cfg[2];
    ev.exclude_kernel = swfilt;
    snprintf(ev.name, sizeof(ev.name), "ibs_op/%s%s%s/", cnt_ctl ? "cnt_ctl=1" : "",
             cnt_ctl && swfilt ? "," : "", swfilt ? "swfilt=1" : "");
    return pmu_add(out, n, max, &ev);
}

int pmu_events_select(const char *root, uint8_t want, pmu_event *out, int max, char *why, size_t whylen)
{
    /* Hybrid Intel parts: P-cores (cpu_core) have the richer PEBS; a thread
     * on an E-core is not sampled by a cpu_core event. */
    static const char *const cores[] = { "cpu_core", "cpu" };
    char list[512];
    long type, precise;
    int n = 0, old_pebs = 0, non_intel = 0;

    for (size_t i = 0; i < sizeof(cores) / sizeof(cores[0]); i++) {
        if (pmu_read_number(root, cores[i], "type", &type) < 0)
            continue;
        if (!pmu_is_intel_core(root, cores[i])) {
            non_intel = 1;
            continue;
        }
        if (pmu_read_number(root, cores[i], "caps/max_precise", &precise) == 0 && precise < 2) {
            old_pebs = 1;
            continue;
        }
        n = pmu_add_intel(root, cores[i], (uint32_t)type, want, out, n, max);
    }
    if (pmu_read_number(root, "ibs_op", "type", &type) == 0)
        n = pmu_add_ibs(root, (uint32_t)type, out, n, max);
    if (n > 0 || !why || !whylen)
        return n;
    if (pmu_events_list(root, list, sizeof(list)) <= 0)
        snprintf(list, sizeof(list), "none");
    if (old_pebs)
        snprintf(why, whylen, "the Intel PMU cannot give precise IPs (caps/max_precise < 2) — "
                 "hardware sampling needs Sandy Bridge or later");
    else if (non_intel)
        snprintf(why, whylen, "the CPU's PMU has no memory sampling wasp can use (no ibs_op PMU, "
                 "no Intel PEBS memory events: an AMD CPU whose hypervisor hides IBS, or an "
                 "Intel CPU older than Sandy Bridge) — run on bare metal or pass IBS through "
                 "to the VM");
    else
        snprintf(why, whylen, "no hardware PMU here (%s has: %s; a VM or container?) — for hardware "
                 "sampling run on bare metal or in a VM with PMU passthrough", root, list);
    return 0;
}

int pmu_kernel_at_least(const char *release, int major, int minor)
{
    int a = 0, b = 0;
    if (sscanf(release, "%d.%d", &a, &b) < 1)
        return 0;
    return a > major || (a == major && b >= minor);
}

void pmu_explain_open_error(const pmu_event *ev, int err, int paranoid, char *buf, size_t len)
{
    char level[32];
    if (paranoid < -1)
        snprintf(level, sizeof(level), "unknown");
    else
        snprintf(level, sizeof(level), "%d", paranoid);
    switch (err) {
    case EACCES:
    case EPERM:
        if (!ev->exclude_kernel)
            snprintf(buf, len, "%s is not permitted (%s): this kernel's IBS cannot leave kernel "
                     "samples out (no ibs_op/format/swfilt before Linux 6.14), which needs root, "
                     "CAP_PERFMON or perf_event_paranoid <= 1 (it is %s) — run as root or "
                     "lower /proc/sys/kernel/perf_event_paranoid", ev->name, strerror(err), level);
        else
            snprintf(buf, len, "%s is not permitted (%s; perf_event_paranoid is %s) — run as root, "
                     "grant CAP_PERFMON, set /proc/sys/kernel/perf_event_paranoid to 2 or lower, "
                     "or allow perf_event_open in the container's seccomp profile",
                     ev->name, strerror(err), level);
        break;
    case ENOENT:
    case ENODEV:
    case EOPNOTSUPP:
    case EINVAL:
        snprintf(buf, len, "the kernel refused %s with precise_ip %d (%s): this CPU, kernel or "
                 "hypervisor does not support it — check that `perf record -e %s%s -- true` works",
                 ev->name, ev->precise_ip, strerror(err), ev->name, ev->precise_ip >= 2 ? "pp" : "");
        break;
    case EBUSY:
    case ENOSPC:
        snprintf(buf, len, "%s is busy (%s): another profiler or the NMI watchdog holds the "
                 "counters — stop it, or write 0 to /proc/sys/kernel/nmi_watchdog",
                 ev->name, strerror(err));
        break;
    case ENOSYS:
        snprintf(buf, len, "this kernel has no perf_event_open (%s) — enable CONFIG_PERF_EVENTS",
                 strerror(err));
        break;
    default:
        snprintf(buf, len, "%s cannot be opened (%s) — check `dmesg` and perf_event_paranoid "
                 "(it is %s)", ev->name, strerror(err), level);
        break;
    }
}

int pmu_read_paranoid(void)
{
    long v;
    if (pmu_read_number("/proc/sys/kernel", ".", "perf_event_paranoid", &v) < 0)
        return -2;
    return (int)v;
}

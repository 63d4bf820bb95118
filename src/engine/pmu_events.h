/*
 * pmu_events.h - which hardware event samples memory accesses on this
 * machine, read from the kernel's PMU descriptions in sysfs.
 *
 * Everything here is a function of a sysfs root directory (normally
 * PMU_SYSFS_ROOT) and plain values, so tests hand it fake Intel and AMD
 * trees. Normal context only; nothing opens an event.
 */
#ifndef WASP_PMU_EVENTS_H
#define WASP_PMU_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#define PMU_SYSFS_ROOT "/sys/bus/event_source/devices"
#define PMU_MAX_CANDIDATES 4

enum pmu_kind {
    PMU_PEBS = 1,   /* Intel precise event-based sampling on a core PMU */
    PMU_IBS,        /* AMD instruction-based sampling, the ibs_op PMU */
};

typedef struct pmu_event {
    char pmu[32];            /* sysfs PMU name: cpu, cpu_core, ibs_op */
    char name[64];           /* what the user would write to perf: cpu/mem-stores/ */
    enum pmu_kind kind;
    uint32_t type;           /* attr.type, from <pmu>/type */
    uint64_t config, config1, config2;
    uint64_t sample_type;    /* PERF_SAMPLE_* the sampler asks for */
    int precise_ip;
    int exclude_kernel;      /* 0 only for IBS without kernel-side filtering */
    int stores;              /* 1: counts stores; 0: loads; -1: all ops (IBS) */
} pmu_event;

/*
 * The events that can sample accesses of the wanted kind (ACCESS_STORE or
 * ACCESS_LOAD), best first: Intel's named mem-stores/mem-loads, then
 * MEM_INST_RETIRED.ALL_STORES/ALL_LOADS encoded with the PMU's format, and
 * AMD's ibs_op. Returns how many were written to out (at most max); with 0,
 * why says what is missing, in words a user can act on.
 */
int pmu_events_select(const char *root, uint8_t want, pmu_event *out, int max, char *why, size_t whylen);

/*
 * Encodes perf event terms ("event=0xd0,umask=0x82", a bare "any" meaning
 * any=1) with the PMU's format files (root/<pmu>/format/<term>, e.g.
 * "config:0-7" or "config1:0-15") into cfg[0..2] = config, config1, config2.
 * Returns 0, or -1 with the unknown term or bad value in err.
 */
int pmu_events_encode(const char *root, const char *pmu, const char *terms, uint64_t cfg[3],
                      char *err, size_t errlen);

/* Pure. ORs value into cfg[] at the bits a format string names: "config:0-7",
 * "config1:0-15", "config:0-7,32-35" (value bits fill the ranges low bit
 * first) or "config2:0". Returns 0, or -1 for a malformed format or a value
 * that does not fit. */
int pmu_format_apply(const char *format, uint64_t value, uint64_t cfg[3]);

/* Names of the PMUs under root, space separated and sorted, into buf.
 * Returns their number, or -1 when root cannot be read. */
int pmu_events_list(const char *root, char *buf, size_t len);

/* Pure. 1 when a `uname -r` release is at least major.minor. */
int pmu_kernel_at_least(const char *release, int major, int minor);

/* Pure. Why opening ev failed with errno err, and the fix, for a user;
 * paranoid is /proc/sys/kernel/perf_event_paranoid (or a value < -1 when
 * unknown). */
void pmu_explain_open_error(const pmu_event *ev, int err, int paranoid, char *buf, size_t len);

/* /proc/sys/kernel/perf_event_paranoid, or -2 when it cannot be read. */
int pmu_read_paranoid(void);

#endif

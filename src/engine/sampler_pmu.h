/*
 * sampler_pmu.h - the hardware (PMU) address sampler's parts that tests and
 * `wasp doctor` use directly: opening and probing an event, and turning one
 * ring-buffer sample into a memory access.
 */
#ifndef WASP_SAMPLER_PMU_H
#define WASP_SAMPLER_PMU_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <ucontext.h>
#include "access.h"
#include "drops.h"
#include "pmu_events.h"
#include "ringbuf.h"

/* Data pages of each thread's ring buffer (a power of two). With one signal
 * per sample the handler drains it every time: one page holds ~120 samples,
 * and the perf mlock budget (perf_event_mlock_kb per CPU) stays ample for
 * hundreds of threads at two pages each. */
#define PMU_RING_PAGES 1

/* Normal context. Opens ev for thread tid (0: the caller), disabled, one
 * SIGTRAP carrying sig_data per `period` events. Returns an fd or -1 (errno). */
int pmu_open(const pmu_event *ev, pid_t tid, uint64_t period, uint64_t sig_data);

/* Normal context. Opens ev on the calling thread, maps its ring buffer and
 * closes both. Returns 0, or -1 with the cause and fix in why. */
int pmu_probe(const pmu_event *ev, uint64_t period, char *why, size_t whylen);

/* Normal context. The events pmu_events_select offers for the wanted kind
 * whose probe succeeds: the first is written to *chosen. Returns 0, or -1
 * with why the PMU cannot be used (the most preferred event's failure). */
int pmu_choose(const char *sysfs_root, uint8_t want, uint64_t period, pmu_event *chosen,
               char *why, size_t whylen);

/* Signal context. The access sample s of thread tid stands for: the data
 * address from the hardware, width/kind/fp type from decoding the
 * instruction at the sample IP (registers in uc are not used for the
 * address: they belong to a later instruction). */
enum drop_reason pmu_sample_access(const ringbuf_sample *s, pid_t tid, const ucontext_t *uc,
                                   mem_access *out);

#endif

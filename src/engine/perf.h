/*
 * perf.h - the perf_event_open calls wasp makes: the per-thread CPU-time
 * sampler and the per-thread breakpoints (watchpoints).
 *
 * Both use attr.sigtrap: the kernel sends SIGTRAP (si_code TRAP_PERF) to the
 * thread itself, synchronously, with attr.sig_data in the siginfo. That is
 * about half the cost of F_SETSIG delivery on our VMs (docs/how-it-works.md)
 * and lets sig_data carry the thread's state pointer, so the handler needs
 * neither TLS nor a lookup.
 */
#ifndef WASP_PERF_H
#define WASP_PERF_H

#include <linux/perf_event.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Opens a task-clock sampler for thread tid; returns an fd or -1 (errno). */
int perf_open_sampler(pid_t tid, uint64_t period_ns, uint64_t sig_data);

/* Opens a disabled write breakpoint for thread tid and fills *attr with the
 * attributes used, which every later modification must keep. */
int perf_open_breakpoint(pid_t tid, uint64_t sig_data, struct perf_event_attr *attr);

/* Signal-safe. Points the breakpoint at [addr, addr+len) and enables it;
 * rw selects read-or-write traps instead of write-only. Returns 0 or -1. */
int perf_arm_breakpoint(int fd, struct perf_event_attr *attr, uint64_t addr, uint32_t len, int rw);

/* Signal-safe. Points the breakpoint at the instruction at pc (an execute
 * breakpoint: it traps before the instruction runs) and enables it.
 * Returns 0 or -1. */
int perf_arm_code_breakpoint(int fd, struct perf_event_attr *attr, uint64_t pc);

/* Signal-safe. Disables the breakpoint. */
int perf_disarm_breakpoint(int fd, struct perf_event_attr *attr);

/* The kernel's id of the perf event behind fd, 0 when fd is not one (a
 * program that closed our descriptor may have reused its number). */
uint64_t perf_event_id(int fd);

/* Signal-safe. Starts or stops a sampler. */
int perf_enable(int fd, int on);

/* Signal-safe. A sampler's new period (ns of task clock, or events), from
 * its next sample on. Returns 0 or -1. */
int perf_set_period(int fd, uint64_t period);

/* The event's count so far (a task clock: the thread's CPU time in ns,
 * in the kernel too, since it was enabled). Returns 0 or -1. */
int perf_read_count(int fd, uint64_t *count);

/* Normal context. Checks that this process can open what wasp needs: a
 * task-clock sampler and `slots` breakpoints on the calling thread. Returns
 * 0, or -1 with a message that names the fix. */
int perf_probe(int slots, char *err, size_t errlen);

/* Fields of a TRAP_PERF siginfo that glibc's siginfo_t does not name. */
static inline uint64_t perf_sig_data(const siginfo_t *si)
{
    return *(const uint64_t *)((const char *)si + 24);
}

static inline uint32_t perf_sig_flags(const siginfo_t *si)
{
    return *(const uint32_t *)((const char *)si + 36);
}

#ifndef TRAP_PERF
#define TRAP_PERF 6
#endif
#define WASP_TRAP_PERF_FLAG_ASYNC 1u

#endif

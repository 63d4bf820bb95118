/*
 * perf.c - perf_event_open for samplers and breakpoints.
 *
 * The arm/disarm/enable functions run in signal context: one ioctl each.
 */
#include "perf.h"

#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int perf_event_open(struct perf_event_attr *attr, pid_t tid)
{
    return (int)syscall(SYS_perf_event_open, attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

int perf_open_sampler(pid_t tid, uint64_t period_ns, uint64_t sig_data)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_SOFTWARE;
    /* Task clock counts the thread's own CPU time: a blocked thread is not
     * sampled, so sleeping programs cost nothing. */
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    attr.sample_period = period_ns;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.remove_on_exec = 1;
    attr.sigtrap = 1;
    attr.sig_data = sig_data;
    return perf_event_open(&attr, tid);
}

int perf_open_breakpoint(pid_t tid, uint64_t sig_data, struct perf_event_attr *attr)
{
    static uint64_t parking;  /* a harmless address to park disabled breakpoints on */
    memset(attr, 0, sizeof(*attr));
    attr->size = sizeof(*attr);
    attr->type = PERF_TYPE_BREAKPOINT;
    attr->bp_type = HW_BREAKPOINT_W;
    attr->bp_addr = (uint64_t)&parking;
    attr->bp_len = HW_BREAKPOINT_LEN_8;
    attr->sample_period = 1;
    attr->disabled = 1;
    attr->exclude_kernel = 1;
    attr->exclude_hv = 1;
    attr->remove_on_exec = 1;
    attr->sigtrap = 1;
    attr->sig_data = sig_data;
    return perf_event_open(attr, tid);
}

int perf_arm_breakpoint(int fd, struct perf_event_attr *attr, uint64_t addr, uint32_t len, int rw)
{
    attr->bp_addr = addr;
    attr->bp_len = len;
    attr->bp_type = rw ? HW_BREAKPOINT_RW : HW_BREAKPOINT_W;
    attr->disabled = 0;
    return ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, attr) < 0 ? -1 : 0;
}

int perf_arm_code_breakpoint(int fd, struct perf_event_attr *attr, uint64_t pc)
{
    attr->bp_addr = pc;
    attr->bp_len = sizeof(long);   /* what x86 requires of an execute breakpoint */
    attr->bp_type = HW_BREAKPOINT_X;
    attr->disabled = 0;
    return ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, attr) < 0 ? -1 : 0;
}

int perf_disarm_breakpoint(int fd, struct perf_event_attr *attr)
{
    attr->disabled = 1;
    return ioctl(fd, PERF_EVENT_IOC_DISABLE, 0) < 0 ? -1 : 0;
}

uint64_t perf_event_id(int fd)
{
    uint64_t id = 0;
    return ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0 ? 0 : id;
}

int perf_enable(int fd, int on)
{
    return ioctl(fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0) < 0 ? -1 : 0;
}

int perf_read_count(int fd, uint64_t *count)
{
    return read(fd, count, sizeof(*count)) == (ssize_t)sizeof(*count) ? 0 : -1;
}

int perf_set_period(int fd, uint64_t period)
{
    return ioctl(fd, PERF_EVENT_IOC_PERIOD, &period) < 0 ? -1 : 0;
}

static const char *perf_fix(int err)
{
    switch (err) {
    case EACCES:
    case EPERM:
        return "perf_event_open is not permitted: run as root, give CAP_PERFMON, lower "
               "/proc/sys/kernel/perf_event_paranoid to 2, or allow perf_event_open in the "
               "container's seccomp profile";
    case ENOSPC:
        return "all debug registers are taken (a debugger or another profiler?): detach it or "
               "lower --slots";
    case ENOENT:
    case ENODEV:
    case EOPNOTSUPP:
        return "this kernel or hypervisor offers no breakpoint PMU: wasp cannot watch memory here";
    case ENOSYS:
        return "this kernel has no perf_event_open";
    case EMFILE:
    case ENFILE:
        return "out of file descriptors (wasp uses 5 per profiled thread): raise `ulimit -n`";
    default:
        return "check `dmesg` and perf_event_paranoid";
    }
}

int perf_probe(int slots, char *err, size_t errlen)
{
    struct perf_event_attr attr[4];
    int fds[5], n = 0, rc = 0;
    fds[n] = perf_open_sampler(0, 10000000, 0);
    if (fds[n] < 0) {
        snprintf(err, errlen, "cannot open a CPU-time sampler (%s) — %s", strerror(errno), perf_fix(errno));
        return -1;
    }
    n++;
    for (int i = 0; i < slots && i < 4; i++) {
        fds[n] = perf_open_breakpoint(0, 0, &attr[i]);
        if (fds[n] < 0) {
            snprintf(err, errlen, "cannot create hardware breakpoint %d of %d (%s) — %s",
                     i + 1, slots, strerror(errno), perf_fix(errno));
            rc = -1;
            break;
        }
        n++;
    }
    while (n > 0)
        close(fds[--n]);
    return rc;
}

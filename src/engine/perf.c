/*
 * perf.c - perf_event_open for samplers and breakpoints.
 *
 * The arm/disarm/enable functions run in signal context: one ioctl each.
 */
#include "perf.h"

#include <errno.h>
#include <linux/hw_breakpoint.h>
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

int perf_disarm_breakpoint(int fd, struct perf_event_attr *attr)
{
    attr->disabled = 1;
    return ioctl(fd, PERF_EVENT_IOC_DISABLE, 0) < 0 ? -1 : 0;
}

int perf_enable(int fd, int on)
{
    return ioctl(fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0) < 0 ? -1 : 0;
}

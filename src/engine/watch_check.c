/*
 * watch_check.c - the watch self-test (watch_check.h).
 *
 * Counting events, not sigtrap ones: the test must not need a SIGTRAP
 * handler, so it can run in the CLI, in `wasp doctor` and in a library
 * constructor before the program's signals are touched. A counting
 * breakpoint increments exactly when the debug register fires.
 */
#include "watch_check.h"
#include "perf.h"

#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define STORES 4

/* Private targets, one per slot, each in its own 8 bytes. */
static volatile uint64_t targets[4];

static int open_counting_watch(volatile uint64_t *addr, int rw)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_BREAKPOINT;
    a.bp_type = rw ? HW_BREAKPOINT_RW : HW_BREAKPOINT_W;
    a.bp_addr = (uint64_t)(uintptr_t)addr;
    a.bp_len = HW_BREAKPOINT_LEN_8;
    a.sample_period = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static void check_writes(int slots, watch_check *out)
{
    int fds[4];
    for (int i = 0; i < slots; i++) {
        fds[i] = open_counting_watch(&targets[i], 0);
        if (fds[i] < 0) {
            out->open_errno = errno;
            slots = i;
            break;
        }
    }
    out->opened = slots;
    for (int i = 0; i < slots; i++)
        for (int k = 0; k < STORES; k++)
            targets[i] = (uint64_t)k;
    for (int i = 0; i < slots; i++) {
        uint64_t n = 0;
        out->fired += perf_read_count(fds[i], &n) == 0 && n >= STORES;
        close(fds[i]);
    }
}

static void check_reads(watch_check *out)
{
    int fd = open_counting_watch(&targets[0], 1);
    if (fd < 0)
        return;
    uint64_t sink = targets[0];
    (void)sink;
    uint64_t n = 0;
    out->rw_fired = perf_read_count(fd, &n) == 0 && n >= 1;
    close(fd);
}

enum watch_verdict watch_check_run(int slots, watch_check *out)
{
    memset(out, 0, sizeof(*out));
    out->wanted = slots < 1 ? 1 : slots > 4 ? 4 : slots;
    check_writes(out->wanted, out);
    if (out->opened > 0)
        check_reads(out);
    if (out->opened == 0)
        out->verdict = WATCH_CANNOT_OPEN;
    else if (out->fired == 0 && !out->rw_fired)
        out->verdict = WATCH_NEVER_FIRES;
    else if (out->fired < out->opened || !out->rw_fired)
        out->verdict = WATCH_PARTIAL;
    else
        out->verdict = WATCH_FIRES;
    return out->verdict;
}

const char *watch_verdict_name(enum watch_verdict v)
{
    switch (v) {
    case WATCH_FIRES: return "fires";
    case WATCH_NEVER_FIRES: return "never-fires";
    case WATCH_PARTIAL: return "partial";
    case WATCH_CANNOT_OPEN: return "cannot-open";
    }
    return "unchecked";
}

void watch_check_describe(const watch_check *c, char *buf, size_t len)
{
    switch (c->verdict) {
    case WATCH_FIRES:
        snprintf(buf, len, "watchpoints fire: %d of %d slots trapped on every store, reads trap too",
                 c->fired, c->wanted);
        break;
    case WATCH_NEVER_FIRES:
        snprintf(buf, len, "breakpoints open but never fire (the hypervisor does not pass debug "
                 "registers through): wasp can sample but cannot watch here — run on bare metal or "
                 "a VM type that passes debug registers through, or use `wasp run --exact`");
        break;
    case WATCH_PARTIAL:
        snprintf(buf, len, "only %d of %d watchpoint slots fire%s: results would be partial — "
                 "free the debug registers (a debugger?) or lower --slots to %d",
                 c->fired, c->opened, c->rw_fired ? "" : " and read watches never do",
                 c->fired > 0 ? c->fired : 1);
        break;
    case WATCH_CANNOT_OPEN:
        snprintf(buf, len, "no hardware breakpoint opens (%s): wasp cannot watch memory here",
                 strerror(c->open_errno));
        break;
    }
}

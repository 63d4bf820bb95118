/*
 * watch_check.h - the watch self-test: do this machine's watchpoints fire?
 *
 * On some VMs the breakpoint PMU opens its slots but the hypervisor never
 * passes the debug registers through, so no watchpoint ever traps. Only a
 * trap proves a watchpoint works: arm one on a private variable, store to
 * it, and count. Shared by `wasp doctor`, `wasp run` and the library's
 * start-up. Normal context; a few tens of microseconds, once per process.
 */
#ifndef WASP_WATCH_CHECK_H
#define WASP_WATCH_CHECK_H

#include <stddef.h>

enum watch_verdict {
    WATCH_FIRES,        /* every slot that opened trapped (writes and reads) */
    WATCH_NEVER_FIRES,  /* slots open, but none trapped */
    WATCH_PARTIAL,      /* some slots trapped, others did not */
    WATCH_CANNOT_OPEN,  /* not even one breakpoint opens */
};

typedef struct watch_check {
    enum watch_verdict verdict;
    int wanted;         /* slots tried */
    int opened;         /* slots that opened */
    int fired;          /* slots whose write watch counted every store */
    int rw_fired;       /* a read-write watch counted a load */
    int open_errno;     /* why the first slot that did not open failed */
} watch_check;

/* Arms up to `slots` (1-4) write watchpoints on private variables of the
 * calling thread, stores to each, then a read-write one and loads; fills
 * *out and returns its verdict. */
enum watch_verdict watch_check_run(int slots, watch_check *out);

/* One word for the profile header and JSON: fires, never-fires, partial,
 * cannot-open, unchecked. */
const char *watch_verdict_name(enum watch_verdict v);

/* A sentence for users: what the result means and, when watches do not
 * fire, what would help. */
void watch_check_describe(const watch_check *c, char *buf, size_t len);

#endif

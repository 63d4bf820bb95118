/*
 * guardian.c - the guardian process (guardian.h).
 *
 * Until the process ends the guardian runs on its own stack and the TLS of
 * the thread that made it, so it calls nothing of libc: a failing libc
 * call would set that thread's errno under its feet. It makes raw system
 * calls only: blocks every signal (so no handler of the program's ever
 * runs in it), closes every descriptor it was given a copy of but its
 * pidfd of the process (a copy of a pipe's write end would keep the
 * program's reader from seeing EOF; of a listening socket, keep a
 * restarted server from binding), and waits. Once a second it asks the
 * kernel whether the process still runs on this memory (an exec gives it
 * a new one: the old image wrote its profiles before the exec, and the
 * new one has a guardian of its own), and leaves if not.
 *
 * When the process has ended, nothing else runs on this memory, so libc is
 * the guardian's to use, from a thread of its own: libc knows the guardian
 * by the TLS of a thread that is gone (whose id the kernel zeroed as it
 * ended), and libdw, writing from there, spun for ever in
 * pthread_rwlock_tryrdlock; so the write runs in a thread libc made
 * (engine_spawn_thread: the real pthread_create, unprofiled), and the
 * guardian's first task leaves. Nothing is started when the process wrote
 * its profiles itself. A thread may have died holding a lock (malloc's,
 * when a signal handler that interrupted malloc ended the process; stdio's;
 * wasp's), and the write would then wait for ever: a monitor task that
 * calls nothing of libc, started first, ends the guardian once it has used
 * no CPU for 3 s (or after 60 s in all), and those profiles are lost, as
 * they were before.
 *
 * Its parent is the process; exit signal none, so the program's wait()
 * never sees it (only __WALL does). When the process ends the kernel
 * hands it to the nearest subreaper (wasp run is one) or init, with
 * SIGCHLD, to be reaped like any orphan.
 */
#include "guardian.h"

#include <errno.h>
#include <linux/kcmp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "engine.h"
#include "raw_syscall.h"

#define GUARDIAN_STACK (1024u * 1024u)   /* symbolizing wants room, as the checkpoint thread */
#define GUARDIAN_GUARD 4096u
#define GUARDIAN_MONITOR_STACK (64u * 1024u)
#define GUARDIAN_WRITE_LIMIT_NS 60000000000ll   /* the whole write */
#define GUARDIAN_STALL_NS 3000000000ll          /* no CPU used for this long: stuck on a lock */
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

static struct {
    int pidfd;
    pid_t target, pid;
    void (*write_after_end)(void);
    char *monitor_stack;
} guard;

static void raw_set_mask(uint64_t mask)
{
    raw_syscall(SYS_rt_sigprocmask, SIG_SETMASK, (long)&mask, 0, sizeof(mask), 0);
}

/* close_range came with Linux 5.9 (pidfd_open with 5.3): before it, one
 * close per descriptor up to the soft limit. */
static void close_all_but(int keep)
{
    if ((keep == 0 || raw_syscall(SYS_close_range, 0, keep - 1, 0, 0, 0) == 0) &&
        raw_syscall(SYS_close_range, (long)keep + 1, (long)~0u, 0, 0, 0) == 0)
        return;
    struct rlimit lim = { 0, 0 };
    raw_syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, (long)&lim, 0);
    for (long fd = 0; fd < (long)lim.rlim_cur && fd < (1l << 20); fd++)
        if (fd != keep)
            raw_syscall(SYS_close, fd, 0, 0, 0, 0);
}

/* 1 when the process has ended, 0 when it exec'd (or the pidfd failed). */
static int wait_for_end(void)
{
    long self = raw_syscall(SYS_getpid, 0, 0, 0, 0, 0);
    for (;;) {
        struct pollfd p = { .fd = guard.pidfd, .events = POLLIN };
        struct timespec second = { 1, 0 };
        long n = raw_syscall(SYS_ppoll, (long)&p, 1, (long)&second, 0, 0);
        if (n > 0)
            return 1;
        if (n < 0 && n != -EINTR)
            return 0;
        /* 0: same memory; 1 or 2: another (an exec); < 0: cannot tell. */
        long same = raw_syscall(SYS_kcmp, self, guard.target, KCMP_VM, 0, 0);
        if (same == 1 || same == 2)
            return 0;
    }
}

static long long raw_clock_ns(clockid_t id)
{
    struct timespec ts = { 0, 0 };
    raw_syscall(SYS_clock_gettime, id, (long)&ts, 0, 0, 0);
    return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* The monitor: a task of the guardian that calls nothing of libc, so no
 * lock can stop it. Ends the guardian when it has used no CPU for
 * GUARDIAN_STALL_NS (the writer waits on a lock a dead thread held) or
 * after GUARDIAN_WRITE_LIMIT_NS in all; the writer ends it when done. */
static int monitor_main(void *unused)
{
    (void)unused;
    long long start = raw_clock_ns(CLOCK_MONOTONIC), since = start;
    long long cpu = raw_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    for (;;) {
        struct timespec tick = { 0, 200 * 1000 * 1000 };
        raw_syscall(SYS_nanosleep, (long)&tick, 0, 0, 0, 0);
        long long now = raw_clock_ns(CLOCK_MONOTONIC), used = raw_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
        if (used - cpu >= 1000000) {
            cpu = used;
            since = now;
        }
        if (now - since >= GUARDIAN_STALL_NS || now - start >= GUARDIAN_WRITE_LIMIT_NS)
            raw_syscall(SYS_exit_group, 0, 0, 0, 0, 0);
    }
    return 0;
}

static void *write_thread(void *unused)
{
    (void)unused;
    guard.write_after_end();
    raw_syscall(SYS_exit_group, 0, 0, 0, 0, 0);
    return NULL;
}

/* The process has ended: the monitor first, then the writer (whose start
 * needs malloc, whose lock a dead thread may hold). */
static void write_when_ended(void)
{
    if (!engine_active())
        return;   /* the process wrote its profiles itself */
    if (clone(monitor_main, guard.monitor_stack + GUARDIAN_MONITOR_STACK,
              CLONE_VM | CLONE_THREAD | CLONE_SIGHAND | CLONE_FS | CLONE_FILES | CLONE_SYSVSEM, NULL) < 0)
        return;
    if (engine_spawn_thread(write_thread, GUARDIAN_STACK) == 0)
        raw_syscall(SYS_exit, 0, 0, 0, 0, 0);   /* this task only: the writer or the monitor ends the guardian */
}

static int guardian_main(void *unused)
{
    (void)unused;
    raw_set_mask(~0ull);
    close_all_but(guard.pidfd);
    raw_syscall(SYS_prctl, PR_SET_NAME, (long)GUARDIAN_NAME, 0, 0, 0);
    if (wait_for_end()) {
        raw_syscall(SYS_close, guard.pidfd, 0, 0, 0, 0);
        write_when_ended();
    }
    raw_syscall(SYS_exit_group, 0, 0, 0, 0, 0);
    return 0;
}

int guardian_start(void (*write_after_end)(void))
{
    int saved = errno;
    guard.pid = -1;   /* after fork: the parent's is not ours to stop */
    int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
    char *stack = pidfd < 0 ? MAP_FAILED :
        mmap(NULL, GUARDIAN_STACK + GUARDIAN_MONITOR_STACK, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    pid_t pid = -1;
    if (stack != MAP_FAILED) {
        mprotect(stack, GUARDIAN_GUARD, PROT_NONE);
        mprotect(stack + GUARDIAN_STACK, GUARDIAN_GUARD, PROT_NONE);
        guard.monitor_stack = stack + GUARDIAN_STACK;
        guard.pidfd = pidfd;
        guard.target = getpid();
        guard.write_after_end = write_after_end;
        /* Exit signal 0: no SIGCHLD for the program, invisible to its wait(). */
        pid = clone(guardian_main, stack + GUARDIAN_STACK, CLONE_VM | CLONE_UNTRACED, NULL);
        if (pid < 0)
            munmap(stack, GUARDIAN_STACK + GUARDIAN_MONITOR_STACK);
        guard.pid = pid;
    }
    if (pidfd >= 0)
        close(pidfd);
    errno = saved;
    return pid;
}

void guardian_stop(void)
{
    int saved = errno;
    if (guard.pid > 0 && guard.target == getpid() && kill(guard.pid, SIGKILL) == 0)
        waitpid(guard.pid, NULL, __WALL);
    guard.pid = -1;
    errno = saved;
}

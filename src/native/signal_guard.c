/*
 * signal_guard.c - SIGTRAP stays wasp's while the program keeps its own view
 * of it: sigaction, signal, sigprocmask and pthread_sigmask are interposed.
 *
 * wasp's samples and traps arrive as SIGTRAP. A program that installs its
 * own SIGTRAP handler, resets every signal to the default (daemons), or
 * blocks every signal (sigwait loops) would otherwise take wasp's signals
 * or die of them. Here the program's SIGTRAP disposition is recorded, not
 * applied: the engine's handler stays installed and passes the program's own
 * traps on to it exactly as the kernel would (handler.c), and SIGTRAP is
 * never really blocked, so sigwait never consumes a sample. What the program
 * asked for is what it reads back. Everything else goes straight to libc.
 * A raw rt_sigaction system call still wins; the profile then says sampling
 * stopped (engine.c).
 */
#include <dlfcn.h>
#include <signal.h>
#include <stddef.h>

#include "handler.h"

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef int (*sigmask_fn)(int, const sigset_t *, sigset_t *);

static sigaction_fn libc_sigaction;
static sigmask_fn libc_sigprocmask, libc_pthread_sigmask;

/* Resolved at load time, before the program could call them from a signal
 * handler (dlsym is not async-signal-safe); the lazy path covers a call
 * made by another library's constructor before ours ran. */
__attribute__((constructor)) static void signal_guard_resolve(void)
{
    if (!libc_sigaction)
        libc_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
    if (!libc_sigprocmask)
        libc_sigprocmask = (sigmask_fn)dlsym(RTLD_NEXT, "sigprocmask");
    if (!libc_pthread_sigmask)
        libc_pthread_sigmask = (sigmask_fn)dlsym(RTLD_NEXT, "pthread_sigmask");
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    signal_guard_resolve();
    if (sig == SIGTRAP && handler_program_action(act, old) == 0)
        return 0;
    return libc_sigaction(sig, act, old);
}

/* glibc's signal() has BSD semantics: the handler stays, calls restart. */
sighandler_t signal(int sig, sighandler_t handler)
{
    struct sigaction act = { 0 }, old;
    act.sa_handler = handler;
    act.sa_flags = SA_RESTART;
    sigemptyset(&act.sa_mask);
    if (sigaction(sig, &act, &old) < 0)
        return SIG_ERR;
    return old.sa_handler;
}

/* Whether this thread's program code believes SIGTRAP blocked. Static TLS
 * (the library is preloaded), so reading it in a handler is safe. */
static __thread int trap_blocked;

static void note_trap_mask(int how, const sigset_t *set)
{
    if (how == SIG_SETMASK)
        trap_blocked = sigismember(set, SIGTRAP) == 1;
    else if (sigismember(set, SIGTRAP) == 1)
        trap_blocked = how == SIG_BLOCK;
}

/* Outside handlers SIGTRAP is never really blocked (below), so a blocked
 * SIGTRAP means a handler runs: wasp's own, which masks every signal, or a
 * program's SIGTRAP handler it passed a trap to. */
static int trap_really_blocked(sigmask_fn real)
{
    sigset_t now;
    return real(SIG_BLOCK, NULL, &now) == 0 && sigismember(&now, SIGTRAP) == 1;
}

/* Inside a handler the mask changes but SIGTRAP stays blocked, and the
 * program's recorded view is left alone (the kernel restores the mask when
 * the handler returns). libunwind, walking a stack in wasp's handler, saves
 * and restores the mask around its locks and its pthread_once; unblocking
 * SIGTRAP there let the next sample in, whose walk then waited forever for
 * the lock the interrupted walk held (every run hung in the QEMU guest,
 * where watchpoints fire). */
static int keep_trap_blocked(sigmask_fn real, int how, const sigset_t *set, sigset_t *old)
{
    sigset_t with;
    if (!set)
        return real(how, set, old);
    with = *set;
    if (how == SIG_SETMASK)
        sigaddset(&with, SIGTRAP);
    else if (how == SIG_UNBLOCK)
        sigdelset(&with, SIGTRAP);
    return real(how, &with, old);
}

/* Blocks what the program asks for except SIGTRAP while wasp owns it. The
 * old mask it reads back shows SIGTRAP blocked where it blocked it. */
static int guarded_mask(sigmask_fn real, int how, const sigset_t *set, sigset_t *old)
{
    if (!handler_owns_sigtrap())
        return real(how, set, old);
    if (trap_really_blocked(real))
        return keep_trap_blocked(real, how, set, old);
    int was_blocked = trap_blocked;
    sigset_t without;
    if (set) {
        without = *set;
        if (how != SIG_UNBLOCK)
            sigdelset(&without, SIGTRAP);
    }
    int rc = real(how, set ? &without : NULL, old);
    if (rc == 0 && old && was_blocked)
        sigaddset(old, SIGTRAP);
    if (rc == 0 && set)
        note_trap_mask(how, set);
    return rc;
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    signal_guard_resolve();
    return guarded_mask(libc_sigprocmask, how, set, old);
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    signal_guard_resolve();
    return guarded_mask(libc_pthread_sigmask, how, set, old);
}

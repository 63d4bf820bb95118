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

/* Applies what the program asks for, except that SIGTRAP's real state
 * never changes while wasp owns it: unblocked in program code, so samples
 * come; blocked inside wasp's own handler, where libraries it calls
 * (libunwind) save, fill and restore the mask around their locks and must
 * not let a nested sample in. The old mask the program reads back shows
 * SIGTRAP blocked where it blocked it. */
static int guarded_mask(sigmask_fn real, int how, const sigset_t *set, sigset_t *old)
{
    if (!handler_owns_sigtrap())
        return real(how, set, old);
    int was_blocked = trap_blocked;
    if (!set) {
        int rc = real(how, NULL, old);
        if (rc == 0 && old && was_blocked)
            sigaddset(old, SIGTRAP);
        return rc;
    }
    sigset_t now, kept = *set;
    if (real(SIG_BLOCK, NULL, &now) != 0)
        return real(how, set, old);
    if (how == SIG_SETMASK && sigismember(&now, SIGTRAP) == 1)
        sigaddset(&kept, SIGTRAP);
    else
        sigdelset(&kept, SIGTRAP);
    int rc = real(how, &kept, old);
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

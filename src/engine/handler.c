/*
 * handler.c - the SIGTRAP handler: one entry for both samples and traps.
 *
 * Runs in signal context: no malloc, no locks, no stdio; errno is preserved;
 * SIGTRAPs that are not ours (a perf event's TRAP_PERF, or a timer's SI_TIMER,
 * carrying a thread state) go to the previous handler.
 * What a sample or a trap does is monitor.c's; this file only recognises
 * the signal, times it, hands it over and charges the thread's overhead
 * budget (budget.h), which may lengthen the thread's sampling interval.
 */
#include "clock.h"
#include "handler.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "monitor.h"
#include "switches.h"
#include "thread.h"
#include "perf.h"

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

/* What the program set for SIGTRAP (or found there before wasp): applied to
 * its own traps only. */
static struct sigaction program_action;
static int installed;
static int empty_handler;
/* libc's sigaction: the library may interpose its own (signal_guard.c). */
static sigaction_fn libc_sigaction;
/* The sampler whose period the budget sets. */
static const sampler *active_sampler;

static uint64_t now_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

/* What the handler costs the thread, for the budget: its CPU time, not the
 * wall-clock time the stats keep, which on a loaded host also counts the
 * other processes that ran while the handler was preempted (one system
 * call each way: clock_gettime is async-signal-safe). */
static uint64_t thread_cpu_ns(void)
{
    return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

void handler_new_epoch(void)
{
    monitor_new_epoch();
}

/* A SIGTRAP that is not ours goes where the program said, as the kernel
 * would have sent it: its handler runs with its own sa_mask added to the
 * mask the thread had (and SIGTRAP unless SA_NODEFER), SA_RESETHAND resets
 * it first; SIG_IGN drops it; SIG_DFL kills the process by it (it is
 * blocked while we run, so the re-raised signal arrives as we return). */
static void pass_on(int sig, siginfo_t *si, void *ctx)
{
    struct sigaction a = program_action;
    const ucontext_t *uc = ctx;
    if (!(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_IGN)
        return;
    if (!(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_DFL) {
        struct sigaction dfl = { 0 };
        dfl.sa_handler = SIG_DFL;
        libc_sigaction(sig, &dfl, NULL);
        installed = 0;
        raise(sig);
        return;
    }
    if (a.sa_flags & SA_RESETHAND) {
        memset(&program_action, 0, sizeof(program_action));
        program_action.sa_handler = SIG_DFL;
    }
    sigset_t during = uc->uc_sigmask, ours;
    for (int s = 1; s < NSIG; s++)
        if (sigismember(&a.sa_mask, s) == 1)
            sigaddset(&during, s);
    if (!(a.sa_flags & SA_NODEFER))
        sigaddset(&during, sig);
    sigdelset(&during, SIGTRAP);   /* wasp's own signals must still get through */
    /* The system call itself: the library's pthread_sigmask is the
     * program's view (signal_guard.c), not what we set here. */
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &during, &ours, _NSIG / 8);
    if (a.sa_flags & SA_SIGINFO)
        a.sa_sigaction(sig, si, ctx);
    else
        a.sa_handler(sig);
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &ours, NULL, _NSIG / 8);
}

/* Signal context, in t's thread. A thread adopted from another gets its
 * signal stack here, from its first handler (sigaltstack is
 * async-signal-safe; this handler is not on it, so it may be set): later
 * signals run on it. A thread with a stack of its own keeps that. */
static void take_pending_stack(thread_state *t)
{
    stack_t now, ours;
    char *p = __atomic_exchange_n(&t->altstack_pending, NULL, __ATOMIC_ACQ_REL);
    if (!p)
        return;
    if (sigaltstack(NULL, &now) == 0 && (now.ss_flags & SS_DISABLE)) {
        ours.ss_sp = p + ALTSTACK_GUARD;
        ours.ss_size = ALTSTACK_SIZE - ALTSTACK_GUARD;
        ours.ss_flags = 0;
        if (sigaltstack(&ours, NULL) == 0) {
            t->altstack = p;
            return;
        }
    }
    t->altstack_unused = p;
}

/* What the thread's context switches cost depends on the watches armed
 * meanwhile (switch_cost.h): each sample adds those it leaves armed, and
 * every BUDGET_WINDOW samples the switches so far are read, so a profile
 * written by the guardian, after the process is gone, still has them. */
static void note_armed_and_switches(thread_state *t)
{
    for (int i = 0; i < t->watch.nslots; i++)
        t->stats[STAT_ARMED_SEEN] += t->watch.slot[i].armed != 0;
    uint64_t n;
    if (t->stats[STAT_SAMPLES] % BUDGET_WINDOW == 0 && switches_own(&n) == 0 && n > t->switches_seen)
        t->switches_seen = n;
}

/* The budget (budget.h) after a sample: charges it, and gives the sampler
 * its next period, drawn around the controller's interval. cpu_now: the
 * thread's CPU clock now, read once for both. */
static void budget_after_sample(thread_state *t, uint64_t handler_ns, uint64_t cpu_now)
{
    budget_charge(&t->budget, handler_ns, 0);
    budget_sample(&t->budget, active_sampler->cpu_since_sample(t, cpu_now));
    active_sampler->set_period(t, budget_draw_period(t->budget.period, (uint32_t)(watch_random(&t->watch) >> 40)),
                               handler_ns);
}

/* Whether a SIGTRAP waits: the handler blocks every signal, so a sampling
 * period that ends while it runs is delivered as it returns, at the pc it
 * handled (a trap's access, or the sample's own pc), not at one the timer
 * chose. Taken there, samples would follow the traps: a consumer whose
 * traps take long to handle (an unwind through libc) drew them to itself. */
static int sigtrap_pending(void)
{
    sigset_t pending;
    return sigpending(&pending) == 0 && sigismember(&pending, SIGTRAP) == 1;
}

static void on_sigtrap(int sig, siginfo_t *si, void *ctx)
{
    uint64_t data;
    thread_state *t;

    /* A perf event's signal, or the ctimer sampler's timer (sampler_ctimer.c). */
    if (si->si_code == TRAP_PERF)
        data = perf_sig_data(si);
    else if (si->si_code == SI_TIMER)
        data = (uint64_t)si->si_value.sival_ptr;
    else {
        pass_on(sig, si, ctx);
        return;
    }
    /* Ours only if it points into the thread arena: a foreign perf event's
     * sig_data is never dereferenced. A late signal for a released state
     * is ours too, and dropped. */
    if (!thread_in_arena(data & ~SIG_TAG_MASK)) {
        pass_on(sig, si, ctx);
        return;
    }
    t = thread_live(data & ~SIG_TAG_MASK);
    if (!t)
        return;
    /* The handshake with stop_handler (engine.c) and the checkpoint copy
     * (checkpoint.c): in_handler first, then closing and pausing, all
     * sequentially consistent. A signal that meets a copy is counted and
     * dropped, like one that comes while the thread ends. */
    __atomic_store_n(&t->in_handler, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&t->pausing, __ATOMIC_SEQ_CST)) {
        __atomic_fetch_add(&t->stats[STAT_CHECKPOINT_SKIPPED], 1, __ATOMIC_RELAXED);
        __atomic_store_n(&t->in_handler, 0, __ATOMIC_RELEASE);
        return;
    }
    if (__atomic_load_n(&t->closing, __ATOMIC_SEQ_CST) || empty_handler) {
        __atomic_store_n(&t->in_handler, 0, __ATOMIC_RELEASE);
        return;
    }
    int saved_errno = errno;
    uint64_t cpu = thread_cpu_ns(), start = now_ns();
    int owed = t->sample_owed;
    t->sample_owed = 0;
    if (t->altstack_pending)
        take_pending_stack(t);
    if ((data & SIG_TAG_MASK) == SIG_TAG_SAMPLER) {
        monitor_sample(t, si, ctx, owed);
        note_armed_and_switches(t);
        t->last_sample_ns = now_ns();
        t->stats[STAT_SAMPLE_NS] += t->last_sample_ns - start;
        uint64_t cpu_now = thread_cpu_ns();
        budget_after_sample(t, cpu_now - cpu, cpu_now);
    } else {
        monitor_trap(t, si, ctx, (int)(data & SIG_TAG_MASK));
        t->stats[STAT_TRAP_NS] += now_ns() - start;
        budget_charge(&t->budget, thread_cpu_ns() - cpu, 1);
    }
    t->sample_owed = active_sampler->pc_at_delivery && sigtrap_pending();
    __atomic_store_n(&t->in_handler, 0, __ATOMIC_RELEASE);
    errno = saved_errno;
}

int handler_owns_sigtrap(void)
{
    return __atomic_load_n(&installed, __ATOMIC_ACQUIRE);
}

int handler_program_action(const struct sigaction *act, struct sigaction *old)
{
    if (!handler_owns_sigtrap())
        return -1;
    if (old)
        *old = program_action;
    if (act)
        program_action = *act;
    return 0;
}

int handler_still_installed(void)
{
    struct sigaction now;
    if (!libc_sigaction || libc_sigaction(SIGTRAP, NULL, &now) < 0)
        return 0;
    return (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_sigtrap;
}

int handler_install(const wasp_options *o, const engine_frontend *fe, const sampler *s)
{
    struct sigaction sa;
    libc_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
    if (!libc_sigaction)
        libc_sigaction = sigaction;
    empty_handler = o->empty_handler;
    active_sampler = s;
    monitor_setup(o, fe, s, &monitor_perf_io);
    /* A second run in the same process (`wasp attach` again): ours is
     * still there, and what it passes on must stay the program's. */
    if (handler_owns_sigtrap() && handler_still_installed())
        return 0;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_sigtrap;
    /* On the thread's alternate stack (engine.c gives each one). */
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    /* Nothing nests inside our handler: a program's handler that calls
     * _exit or longjmps must not run while ours holds a half-made pair. */
    sigfillset(&sa.sa_mask);
    if (libc_sigaction(SIGTRAP, &sa, &program_action) < 0)
        return -1;
    __atomic_store_n(&installed, 1, __ATOMIC_RELEASE);
    return 0;
}

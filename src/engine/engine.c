/*
 * engine.c - process-wide engine state and the life of a profiled thread.
 *
 * Normal context only (thread start/end, exit, fork). The registry of live
 * threads is guarded by a mutex that no signal handler ever takes.
 */
#include "clock.h"
#include "engine.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "checkpoint.h"
#include "decode.h"
#include "handler.h"
#include "guardian.h"
#include "manifest.h"
#include "perf.h"
#include "pmu_events.h"
#include "profile_build.h"
#include "publish.h"
#include "sampler.h"
#include "signal_stack.h"
#include "switches.h"
#include "thread.h"
#include "watch_check.h"

#define CCT_CAPACITY (1u << 16)
#define PAIR_CAPACITY (1u << 14)

typedef struct registry_entry {
    thread_state *t;
    struct registry_entry *next;
} registry_entry;

static struct {
    int active;
    wasp_options opts;
    const engine_frontend *fe;
    const sampler *sampler;
    char pid_dir[600];
    char watch_word[32];   /* the self-test's result, for every profile's header */
    pthread_mutex_t lock;
    registry_entry *threads;
    int warned_thread, warned_write, warned_fds;
    int fds_held;          /* descriptors wasp holds in this process (engine_fd_budget_take) */
    pid_t pid;             /* the process this state belongs to */
    thread_state *ended;   /* the ended threads' profile (fold_ended), once a thread ended */
    int ending;            /* threads out of the registry, their profiles not yet written */
    profile_build_env env; /* what every profile shares */
} engine = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int make_pid_dir(char *err, size_t errlen)
{
    snprintf(engine.pid_dir, sizeof(engine.pid_dir), "%s/%d", engine.opts.dir, (int)getpid());
    if (publish_mkdirs(engine.pid_dir, PUBLISH_DIR_MODE) == 0 &&
        manifest_open(engine.pid_dir, (int)getpid()) == 0) {
        /* Held for the process's life, in the budget: profiles reach it
         * after a chroot (publish.h). Over budget, paths are used. */
        if (engine_fd_budget_take(1) == 0 && publish_hold_dir(engine.pid_dir) < 0)
            engine_fd_budget_give(1);
        return 0;
    }
    snprintf(err, errlen, "cannot create output directory %s: %s — pass a writable directory with -o DIR",
             engine.pid_dir, errno == ENOTDIR ? "something not a directory (a symbolic link?) is in the way"
                                              : strerror(errno));
    return -1;
}

/* Once per process, before anything is touched: a library started without
 * `wasp run` (-agentpath, a bare LD_PRELOAD) must not profile for nothing
 * on a machine whose watchpoints never trap. watch-check=off (wasp run
 * --no-watch-check, which warned already) goes on; either way every
 * profile records what the test saw. */
static int check_watches(char *err, size_t errlen)
{
    watch_check c;
    watch_check_run(engine.opts.slots, &c);
    snprintf(engine.watch_word, sizeof(engine.watch_word), "%s %d/%d", watch_verdict_name(c.verdict),
             c.fired, c.wanted);
    if (!engine.opts.watch_check || c.verdict == WATCH_FIRES || c.verdict == WATCH_PARTIAL)
        return 0;
    watch_check_describe(&c, err, errlen);
    return -1;
}

int engine_init(const wasp_options *o, const engine_frontend *fe, char *err, size_t errlen)
{
    char why[512];
    engine.opts = *o;
    if (engine.opts.stack == STACK_AUTO)
        engine.opts.stack = fe->stack_default;
    engine.fe = fe;
    if (check_watches(err, errlen) < 0)
        return -1;
    engine.sampler = sampler_select(o, PMU_SYSFS_ROOT, why, sizeof(why));
    if (!engine.sampler) {
        snprintf(err, errlen, "hardware sampling unavailable: %s", why);
        return -1;
    }
    /* `wasp run` resolves auto itself and says it once per run; this line
     * is for a library started another way (e.g. -agentpath). */
    if (o->sampler == SAMPLER_AUTO && engine.sampler != &sampler_pmu)
        fprintf(stderr, "[wasp] INFO using the software sampler: %s\n", why);
    if (decode_init() < 0) {
        snprintf(err, errlen, "cannot initialise the instruction decoder — reinstall libzydis4.0");
        return -1;
    }
    if (make_pid_dir(err, errlen) < 0)
        return -1;
    profile_build_number_from(engine.pid_dir);
    engine.env = (profile_build_env){ .opts = &engine.opts, .fe = fe, .sampler_name = engine.sampler->name,
                                      .watch_check = engine.watch_word, .dir = engine.pid_dir };
    if (handler_install(&engine.opts, fe, engine.sampler) < 0) {
        snprintf(err, errlen, "cannot install the SIGTRAP handler: %s", strerror(errno));
        return -1;
    }
    engine.pid = getpid();
    engine.env.pid = engine.pid;
    engine.active = 1;
    return 0;
}

int engine_owns_process(void)
{
    return engine.active && engine.pid == getpid();
}

int engine_active(void)
{
    return engine.active;
}

/* Under the registry lock. 0, or -1 when out of memory. */
static int registry_link(thread_state *t)
{
    registry_entry *e = malloc(sizeof(*e));
    if (!e)
        return -1;
    e->t = t;
    e->next = engine.threads;
    engine.threads = e;
    t->registered = 1;
    return 0;
}

static void registry_add(thread_state *t)
{
    pthread_mutex_lock(&engine.lock);
    registry_link(t);
    pthread_mutex_unlock(&engine.lock);
}

static void registry_remove(thread_state *t)
{
    pthread_mutex_lock(&engine.lock);
    for (registry_entry **p = &engine.threads; *p; p = &(*p)->next) {
        if ((*p)->t == t) {
            registry_entry *e = *p;
            *p = e->next;
            free(e);
            break;
        }
    }
    t->registered = 0;
    pthread_mutex_unlock(&engine.lock);
}

/* wasp takes at most half of `ulimit -n` (the soft limit, read each time:
 * a JVM raises it at start-up), so that the program never meets EMFILE
 * because of us; threads beyond that run unprofiled. */
int engine_fd_budget_take(int n)
{
    struct rlimit rl;
    uint64_t limit = 1024;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
        limit = rl.rlim_cur == RLIM_INFINITY ? UINT32_MAX : rl.rlim_cur;
    int held = __atomic_add_fetch(&engine.fds_held, n, __ATOMIC_RELAXED);
    if ((uint64_t)held <= limit / 2)
        return 0;
    __atomic_sub_fetch(&engine.fds_held, n, __ATOMIC_RELAXED);
    if (!__atomic_exchange_n(&engine.warned_fds, 1, __ATOMIC_RELAXED))
        fprintf(stderr, "[wasp] WARN %d threads profiled hold half of `ulimit -n` (%llu) in perf "
                "events; later threads run unprofiled — raise `ulimit -n` to profile them all\n",
                (held - n) / n, (unsigned long long)limit);
    return -1;
}

void engine_fd_budget_give(int n)
{
    __atomic_sub_fetch(&engine.fds_held, n, __ATOMIC_RELAXED);
}

/* A program may close every descriptor it did not open (daemons do) and
 * open files that get our numbers: before wasp touches one of its event
 * descriptors again outside the handler, it checks the number still names
 * the event it opened, and otherwise forgets it, never closing or
 * ioctl-ing the program's file. */
static void forget_reused(thread_state *t)
{
    for (int i = 0; i < OPTIONS_MAX_SLOTS; i++)
        if (t->bp_fd[i] >= 0 && perf_event_id(t->bp_fd[i]) != t->event_id[i])
            t->bp_fd[i] = -1;
    if (t->sampler_fd >= 0 && perf_event_id(t->sampler_fd) != t->event_id[OPTIONS_MAX_SLOTS])
        t->sampler_fd = -1;
}

static void note_event_ids(thread_state *t)
{
    for (int i = 0; i < OPTIONS_MAX_SLOTS; i++)
        t->event_id[i] = t->bp_fd[i] >= 0 ? perf_event_id(t->bp_fd[i]) : 0;
    t->event_id[OPTIONS_MAX_SLOTS] = t->sampler_fd >= 0 ? perf_event_id(t->sampler_fd) : 0;
}

/* The thread's CPU time while sampled, read before its sampler closes
 * (its events are checked first: forget_reused). */
static void note_cpu_total(thread_state *t)
{
    uint64_t ns = engine.sampler->cpu_total ? engine.sampler->cpu_total(t) : 0;
    if (ns > t->clock_ns)
        t->clock_ns = ns;
}

/* The kernel's count of t's context switches now (switches.h): its own,
 * or, from another thread, read in /proc. Kept when unreadable, and none
 * for the ended threads' profile (tid 0), which is no thread. */
static void note_switches(thread_state *t)
{
    uint64_t n;
    if (t->tid && (t->tid == gettid() ? switches_own(&n) : switches_of(t->tid, &n)) == 0 && n > t->switches_seen)
        t->switches_seen = n;
}

static void close_events(thread_state *t)
{
    forget_reused(t);
    note_cpu_total(t);
    note_switches(t);
    __atomic_sub_fetch(&engine.fds_held, t->fds_reserved, __ATOMIC_RELAXED);
    t->fds_reserved = 0;
    engine.sampler->thread_stop(t);
    for (int i = 0; i < OPTIONS_MAX_SLOTS; i++) {
        if (t->bp_fd[i] >= 0)
            close(t->bp_fd[i]);
        t->bp_fd[i] = -1;
    }
}

static void thread_free(thread_state *t)
{
    /* Never installed (pending: the thread took no signal; unused: it had
     * a stack of its own), so no signal can be running on them. */
    signal_stack_unmap(__atomic_exchange_n(&t->altstack_pending, NULL, __ATOMIC_ACQ_REL));
    signal_stack_unmap(t->altstack_unused);
    cct_destroy(&t->contexts);
    pairs_destroy(&t->pairs);
    thread_release(t);
}

/* Once per process: a thread we cannot profile runs on unprofiled. */
static void warn_thread_failure(const char *msg)
{
    if (__atomic_exchange_n(&engine.warned_thread, 1, __ATOMIC_RELAXED))
        return;
    fprintf(stderr, "[wasp] ERROR %s; the program runs on unprofiled\n", msg);
}

static int open_events(thread_state *t, char *err, size_t errlen)
{
    for (int i = 0; i < engine.opts.slots; i++) {
        t->bp_fd[i] = perf_open_breakpoint(t->tid, (uint64_t)t | (uint64_t)i, &t->bp_attr[i]);
        if (t->bp_fd[i] < 0) {
            int saved = errno;
            close_events(t);
            /* Let the probe, run with no breakpoint of ours open, name the
             * cause and the fix; else report what this thread met. */
            if (perf_probe(engine.opts.slots, err, errlen) == 0)
                snprintf(err, errlen, "cannot create hardware breakpoint %d for thread %d: %s",
                         i + 1, (int)t->tid, strerror(saved));
            return -1;
        }
    }
    if (engine.sampler->thread_start(t, &engine.opts, err, errlen) < 0)
        return -1;
    note_event_ids(t);
    return 0;
}

/* The calling thread's stack, [lo, hi). Returns 0 or -1. */
static int current_stack(uint64_t *lo, uint64_t *hi)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    int rc = -1;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return -1;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
        *lo = (uint64_t)(uintptr_t)addr;
        *hi = *lo + size;
        rc = 0;
    }
    pthread_attr_destroy(&attr);
    return rc;
}

void engine_thread_stack(const thread_state *t, uint64_t *lo, uint64_t *hi)
{
    *lo = t ? t->stack_lo : 0;
    *hi = t ? t->stack_hi : 0;
}

/* The thread's overhead budget starts at the requested interval, which
 * it never goes below. */
static void start_budget(thread_state *t)
{
    const wasp_options *o = &engine.opts;
    int pmu = engine.sampler == &sampler_pmu;
    uint64_t floor = pmu ? o->period : o->interval_ns;
    uint64_t ceiling = floor * BUDGET_MAX_STRETCH;
    if (!pmu && ceiling > OPTIONS_MAX_INTERVAL_NS)
        ceiling = OPTIONS_MAX_INTERVAL_NS;
    budget_init(&t->budget, o->budget_ppm, o->signal_cost_ns, floor, ceiling, o->slots);
    t->budget.switch_cost_ns = o->switch_cost_ns;
    t->budget.switch_armed_ns = o->switch_armed_ns;
    t->budget.switch_floor_ns = o->switch_floor_ns < o->switch_cost_ns ? o->switch_floor_ns : o->switch_cost_ns;
}

/* The name of thread tid of this process, as the kernel has it. */
static void read_thread_name(pid_t tid, char *name, size_t len)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)tid);
    FILE *f = fopen(path, "re");
    name[0] = '\0';
    if (!f)
        return;
    if (fgets(name, (int)len, f))
        name[strcspn(name, "\n")] = '\0';
    fclose(f);
}

/* wasp's time in a thread's start and end (lifecycle_ns): CPU time, so
 * that threads ending together (a server's workers at its shutdown, each
 * naming its frames) are not charged for waiting on one another. */
#define LIFECYCLE_CLOCK CLOCK_THREAD_CPUTIME_ID

/* Starts sampling thread tid: the caller itself (own), or, for a run
 * started in a live process, a thread that was running before it. perf
 * events open for any thread of the process and a sigtrap event signals
 * the thread it counts; what a thread can only do to itself, set its
 * signal stack, its first handler does (handler.c): that one handler runs
 * on the thread's own stack, which HotSpot keeps deep enough for native
 * code (its shadow pages) wherever Java code runs. */
static thread_state *thread_begin(pid_t tid, void *thread_data, int own, uint64_t lo, uint64_t hi)
{
    char err[512];
    thread_state *t;

    if (!engine.active)
        return NULL;
    uint64_t began_ns = clock_ns(LIFECYCLE_CLOCK);
    manifest_started((int)tid);
    t = thread_alloc();
    if (!t) {
        manifest_lost((int)tid, MANIFEST_LOST_MEMORY);
        warn_thread_failure("too many threads at once (65536) or out of memory");
        return NULL;
    }
    t->tid = tid;
    t->seq = profile_build_next_seq();
    t->start_ns = clock_ns(CLOCK_MONOTONIC);
    t->fe_data = thread_data;
    t->sampler_fd = -1;
    for (int i = 0; i < OPTIONS_MAX_SLOTS; i++)
        t->bp_fd[i] = -1;
    t->stats[STAT_ATTACHED] = engine.opts.attached != 0;
    t->stats[STAT_PREEXISTING] = !own;
    if (own) {
        prctl(PR_GET_NAME, t->name, 0, 0, 0);
        current_stack(&t->stack_lo, &t->stack_hi);
    } else {
        read_thread_name(tid, t->name, sizeof(t->name));
        t->stack_lo = lo;
        t->stack_hi = hi;
    }
    start_budget(t);
    note_switches(t);
    t->switches_begun = t->switches_seen;
    watch_init(&t->watch, engine.opts.slots, (uint64_t)t->tid * 0x9E3779B97F4A7C15ULL ^ (uint64_t)time(NULL));
    if (cct_init(&t->contexts, CCT_CAPACITY) < 0 || pairs_init(&t->pairs, PAIR_CAPACITY) < 0) {
        warn_thread_failure("cannot map profile tables — the system is out of memory");
        manifest_lost((int)t->tid, MANIFEST_LOST_MEMORY);
        thread_free(t);
        return NULL;
    }
    if (engine_fd_budget_take(engine.opts.slots + 1) < 0) {
        manifest_lost((int)t->tid, MANIFEST_LOST_FDS);
        thread_free(t);
        return NULL;
    }
    t->fds_reserved = engine.opts.slots + 1;
    if (open_events(t, err, sizeof(err)) < 0) {
        warn_thread_failure(err);
        manifest_lost((int)t->tid, MANIFEST_LOST_EVENTS);
        close_events(t);
        thread_free(t);
        return NULL;
    }
    if (own)
        signal_stack_give(t);
    else
        t->altstack_pending = signal_stack_map();
    registry_add(t);
    t->stats[STAT_LIFECYCLE_NS] = clock_ns(LIFECYCLE_CLOCK) - began_ns;
    /* Live only now: until here a signal carrying t is ignored. */
    __atomic_store_n(&t->magic, THREAD_MAGIC, __ATOMIC_RELEASE);
    engine.sampler->enable(t, 1, budget_draw_period(t->budget.period, (uint32_t)(watch_random(&t->watch) >> 40)));
    return t;
}

thread_state *engine_thread_begin(void *thread_data)
{
    return thread_begin(gettid(), thread_data, 1, 0, 0);
}

thread_state *engine_thread_adopt(pid_t tid, void *thread_data, uint64_t stack_lo, uint64_t stack_hi)
{
    return thread_begin(tid, thread_data, 0, stack_lo, stack_hi);
}

/* A raw rt_sigaction can take SIGTRAP past signal_guard.c: the program
 * wins, and its profile says when sampling stopped. */
static void note_sampling_end(thread_state *t)
{
    if (t->last_sample_ns > t->start_ns)
        t->stats[STAT_SAMPLING_MS] = (t->last_sample_ns - t->start_ns) / 1000000;
    t->stats[STAT_SIGTRAP_LOST] = !handler_still_installed();
}

static void write_profile(thread_state *t)
{
    char err[512];
    if (t->written)
        return;
    t->written = 1;
    note_sampling_end(t);
    if (profile_build_write(t, &engine.env, 0, err, sizeof(err)) == 0) {
        manifest_wrote((int)t->tid);
        return;
    }
    manifest_lost((int)t->tid, errno == ENOSPC || errno == EDQUOT ? MANIFEST_LOST_DISK_FULL
                                                                  : MANIFEST_LOST_WRITE);
    if (!__atomic_exchange_n(&engine.warned_write, 1, __ATOMIC_RELAXED))
        fprintf(stderr, "[wasp] ERROR %s\n", err);
}

/* Stops the handler using t: after this returns, no handler of t's thread
 * is inside the monitor, and none will enter it (thread_wait_quiet says
 * how). Returns 0 when quiet. */
static int stop_handler(thread_state *t)
{
    __atomic_store_n(&t->closing, 1, __ATOMIC_SEQ_CST);
    return thread_wait_quiet(t);
}

/* Under the registry lock: the ended threads' profile, made at the first
 * thread's end. It is no thread's (tid 0, no events) but lives in the
 * registry, so exit, the guardian and checkpoints write it as a thread's. */
static thread_state *ended_state(void)
{
    thread_state *e = engine.ended;
    if (e)
        return e;
    if (!(e = thread_alloc()))
        return NULL;
    snprintf(e->name, sizeof(e->name), "(ended threads)");
    e->seq = profile_build_next_seq();
    e->sampler_fd = -1;
    for (int i = 0; i < OPTIONS_MAX_SLOTS; i++)
        e->bp_fd[i] = -1;
    start_budget(e);
    if (registry_link(e) < 0) {
        thread_release(e);
        return NULL;
    }
    return engine.ended = e;
}

/* A thread that ends with no pair, and no checkpoint, has nothing to show
 * but its counters: they join the ended threads' profile (one file per
 * process) instead of a file of their own. A program that starts a thread
 * per task made one file per thread, each a create and a rename in one
 * directory: 5,000 threads cost it 3.3 s more than its 0.17 s. A thread
 * with a checkpoint (or one being written) writes its final profile, which
 * supersedes it (profile_build.c, drop_checkpoint): folded, it would leave
 * the checkpoint to count it twice. After the exit-time write, nothing is
 * folded: nothing would write it. 1 when folded. */
static int fold_ended(thread_state *t, uint64_t began_ns)
{
    int folded = 0;
    pthread_mutex_lock(&engine.lock);
    int own_file = t->written || t->pairs.used || t->checkpointed || !engine.active;
    thread_state *e = own_file ? NULL : ended_state();
    if (e && !e->written) {
        t->written = 1;
        t->stats[STAT_LIFECYCLE_NS] += clock_ns(LIFECYCLE_CLOCK) - began_ns;
        thread_fold(e, t);
        folded = 1;
    }
    pthread_mutex_unlock(&engine.lock);
    return folded;
}

void engine_thread_end(thread_state *t)
{
    if (!t)
        return;
    uint64_t began_ns = clock_ns(LIFECYCLE_CLOCK);
    __atomic_store_n(&t->closing, 1, __ATOMIC_SEQ_CST);
    /* Leave the registry first: engine_shutdown, running in another thread,
     * holds the lock while it disables and writes the threads it knows, so
     * we wait here until it is done with ours (t->written tells). */
    /* Counted before it leaves: an exit-time write that does not find it
     * in the registry waits for it. */
    __atomic_add_fetch(&engine.ending, 1, __ATOMIC_ACQ_REL);
    registry_remove(t);
    close_events(t);
    if (!fold_ended(t, began_ns)) {
        t->stats[STAT_LIFECYCLE_NS] += clock_ns(LIFECYCLE_CLOCK) - began_ns;
        t->timed_write = 1;
        signal_stack_run(t, write_profile);
    }
    __atomic_sub_fetch(&engine.ending, 1, __ATOMIC_ACQ_REL);
    signal_stack_take(t);
    thread_free(t);
}

void engine_thread_release(thread_state *t)
{
    if (!t)
        return;
    registry_remove(t);
    close_events(t);
    /* Its signal stack, if wasp gave it one, stays: only the thread itself
     * can take it back, and a later signal may still land on it. */
    thread_free(t);
}

/* Under the registry lock: every thread's events stopped and, once its
 * handler is out, its profile written. */
static void write_all_locked(void)
{
    /* Disable, do not close: a thread still in its handler may issue one
     * more ioctl on these fds, which must not land on a reused number. */
    for (registry_entry *e = engine.threads; e; e = e->next) {
        thread_state *t = e->t;
        __atomic_store_n(&t->closing, 1, __ATOMIC_SEQ_CST);
        forget_reused(t);
        engine.sampler->enable(t, 0, 0);
        note_cpu_total(t);
        note_switches(t);
        for (int i = 0; i < OPTIONS_MAX_SLOTS; i++)
            if (t->bp_fd[i] >= 0)
                perf_enable(t->bp_fd[i], 0);
    }
    for (registry_entry *e = engine.threads; e; e = e->next) {
        if (stop_handler(e->t) != 0)
            continue;
        /* A handler under way when its clock was stopped may have armed
         * it again for its next sample (sampler.h); none can now. */
        if (engine.sampler->rearms_in_handler)
            engine.sampler->enable(e->t, 0, 0);
        write_profile(e->t);
    }
}

/* Threads that left the registry to end are writing their own profiles:
 * the process must not end under them. A server stopped by SIGTERM ends
 * its worker threads in its shutdown hooks, and the JVM's exit (VMDeath,
 * then exit_group) came while they were still naming their frames: Tomcat
 * left 12 of its 31 threads as checkpoints only, reported as "did not end
 * normally". Waited for a while, not for ever: one could be stuck. */
#define ENDING_WAIT_MS 5000

static void wait_for_ending_threads(void)
{
    for (int ms = 0; ms < ENDING_WAIT_MS && __atomic_load_n(&engine.ending, __ATOMIC_ACQUIRE); ms++) {
        struct timespec pause = { 0, 1000000 };
        nanosleep(&pause, NULL);
    }
}

void engine_shutdown(void)
{
    if (!__atomic_exchange_n(&engine.active, 0, __ATOMIC_ACQ_REL))
        return;
    /* A checkpoint under way finishes its thread first: no checkpoint is
     * published after the final profile it would stand beside. */
    checkpoint_stop();
    pthread_mutex_lock(&engine.lock);
    write_all_locked();
    pthread_mutex_unlock(&engine.lock);
    wait_for_ending_threads();
    manifest_exited();
}

void engine_before_setuid(uid_t euid)
{
    if (!engine_owns_process() || euid == (uid_t)-1 || geteuid() != 0 || euid == 0)
        return;
    publish_give_held_dir(euid);
    manifest_give(euid);
}

void engine_sandboxed(void)
{
    manifest_sandboxed();
    guardian_stop();
}

/* In the guardian, the process gone (guardian.c): its descriptors name
 * nothing here, and its threads are dead, so none is waited for. One may
 * have died holding the registry lock, in the middle of nothing that
 * matters to the list (registry_add and registry_remove link and unlink in
 * one store each): the lock is waited for a while, then done without. A
 * thread that died while its handler changed its tables (tables_busy) is
 * left to its last checkpoint: they may be half-updated. */
static void write_after_end(void)
{
    struct timespec until;
    if (!__atomic_exchange_n(&engine.active, 0, __ATOMIC_ACQ_REL))
        return;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 2;
    int locked = pthread_mutex_timedlock(&engine.lock, &until) == 0;
    for (registry_entry *e = engine.threads; e; e = e->next) {
        thread_state *t = e->t;
        t->sampler_fd = -1;
        t->has_cpu_timer = 0;
        for (int i = 0; i < OPTIONS_MAX_SLOTS; i++)
            t->bp_fd[i] = -1;
        if (!t->tables_busy)
            write_profile(t);
    }
    manifest_ended();
    if (locked)
        pthread_mutex_unlock(&engine.lock);
}

void engine_guard(void)
{
    if (engine_owns_process())
        guardian_start(write_after_end);
}

void engine_unguard(void)
{
    guardian_stop();
}

thread_state *engine_after_fork_child(void *thread_data)
{
    char err[512];
    if (!engine.active)
        return NULL;
    /* The inherited fds name the parent's events: drop them unused. Their
     * states are leaked on purpose; the parent still owns their data. */
    for (registry_entry *e = engine.threads; e; e = e->next) {
        e->t->closing = 1;
        e->t->has_cpu_timer = 0;   /* a child has no timers of its parent's */
        if (e->t->sampler_fd >= 0)
            close(e->t->sampler_fd);
        for (int i = 0; i < OPTIONS_MAX_SLOTS; i++)
            if (e->t->bp_fd[i] >= 0)
                close(e->t->bp_fd[i]);
    }
    engine.threads = NULL;
    engine.ended = NULL;   /* the parent's */
    engine.ending = 0;
    engine.fds_held = 0;
    engine.pid = getpid();
    engine.env.pid = engine.pid;
    pthread_mutex_init(&engine.lock, NULL);
    thread_after_fork_child();
    signal_stack_after_fork_child();
    checkpoint_after_fork_child();
    if (make_pid_dir(err, sizeof(err)) < 0) {
        fprintf(stderr, "[wasp] ERROR %s\n", err);
        engine.active = 0;
        return NULL;
    }
    thread_state *t = engine_thread_begin(thread_data);
    engine_checkpoints_start();
    return t;
}

void engine_checkpoints_start(void)
{
    if (engine.active && engine.opts.flush_ns && checkpoint_start(engine.opts.flush_ns, engine.fe) < 0)
        fprintf(stderr, "[wasp] WARN cannot start the checkpoint thread: %s; profiles are written "
                "only when threads end\n", strerror(errno));
}

size_t engine_live_seqs(uint64_t **out)
{
    size_t n = 0, cap = 0;
    *out = NULL;
    pthread_mutex_lock(&engine.lock);
    for (registry_entry *e = engine.threads; e; e = e->next)
        cap++;
    *out = cap ? malloc(cap * sizeof(**out)) : NULL;
    for (registry_entry *e = engine.threads; e && *out; e = e->next)
        if (!__atomic_load_n(&e->t->closing, __ATOMIC_SEQ_CST))
            (*out)[n++] = e->t->seq;
    pthread_mutex_unlock(&engine.lock);
    return n;
}

int engine_with_thread(uint64_t seq, int (*fn)(thread_state *t, void *arg), void *arg)
{
    int rc = -1;
    pthread_mutex_lock(&engine.lock);
    for (registry_entry *e = engine.threads; e && engine.active; e = e->next) {
        if (e->t->seq == seq) {
            if (!__atomic_load_n(&e->t->closing, __ATOMIC_SEQ_CST))
                rc = fn(e->t, arg);
            break;
        }
    }
    pthread_mutex_unlock(&engine.lock);
    return rc;
}

int engine_write_checkpoint(thread_state *copy, uint64_t at_ms, char *err, size_t errlen)
{
    note_sampling_end(copy);
    return profile_build_write(copy, &engine.env, at_ms, err, errlen);
}

void engine_new_epoch(void)
{
    handler_new_epoch();
}

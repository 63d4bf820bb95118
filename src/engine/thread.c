/*
 * thread.c - where thread states live, and the names of their counters as
 * written into profiles.
 *
 * States come from one arena mapped once (MAP_NORESERVE: only the slots in
 * use cost memory) and never unmapped, so the handler may read any address
 * inside it. A free list under a mutex hands slots out; the mutex is never
 * taken in signal context.
 */
#include "thread.h"
#include "engine.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <string.h>
#include <sys/mman.h>

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

#define ARENA_SLOTS (1u << 16)
#define SLOT_SIZE ((sizeof(thread_state) + 63) & ~(size_t)63)

static struct {
    pthread_mutex_t lock;
    char *base;              /* ARENA_SLOTS slots; NULL until the first thread */
    uint32_t next_unused;    /* slots below this were handed out once */
    uint32_t *free_list;     /* released slots, a stack inside the arena's tail */
    uint32_t nfree;
} arena = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int arena_map(void)
{
    size_t size = ARENA_SLOTS * SLOT_SIZE + ARENA_SLOTS * sizeof(uint32_t);
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    arena.free_list = (uint32_t *)((char *)p + ARENA_SLOTS * SLOT_SIZE);
    __atomic_store_n(&arena.base, (char *)p, __ATOMIC_RELEASE);
    return 0;
}

thread_state *thread_alloc(void)
{
    thread_state *t = NULL;
    pthread_mutex_lock(&arena.lock);
    if (arena.base || arena_map() == 0) {
        if (arena.nfree)
            t = (thread_state *)(arena.base + (size_t)arena.free_list[--arena.nfree] * SLOT_SIZE);
        else if (arena.next_unused < ARENA_SLOTS)
            t = (thread_state *)(arena.base + (size_t)arena.next_unused++ * SLOT_SIZE);
    }
    pthread_mutex_unlock(&arena.lock);
    if (t)
        memset(t, 0, sizeof(*t));
    return t;
}

void thread_release(thread_state *t)
{
    __atomic_store_n(&t->magic, 0, __ATOMIC_RELEASE);
    pthread_mutex_lock(&arena.lock);
    arena.free_list[arena.nfree++] = (uint32_t)(((char *)t - arena.base) / SLOT_SIZE);
    pthread_mutex_unlock(&arena.lock);
}

/* What one switch cost the thread without its armed watches: the cost
 * measured at the requested interval, less the sampler's timer part in
 * proportion as the budget lengthened the thread's interval (a timer
 * reprogrammed at a switch only when due before the next tick: past it,
 * about as often as 1/interval). Measured at 1 ms, pinned: 10.0 us a
 * switch with the budget off, 5.1 us with the budget lengthening it to
 * 11 ms. */
static double switch_base_ns(const budget_state *run)
{
    budget_state b = *run;
    budget_flush(&b);
    double base = (double)b.switch_cost_ns, floor = (double)b.switch_floor_ns;
    uint64_t mean = budget_mean_interval(&b);
    if (floor >= base || !b.floor || mean <= b.floor)
        return base;
    return floor + (base - floor) * (double)b.floor / (double)mean;
}

void thread_switches(const thread_state *t, uint64_t *switches, uint64_t *ns)
{
    uint64_t n = t->switches_seen > t->switches_begun ? t->switches_seen - t->switches_begun : 0;
    uint64_t samples = t->stats[STAT_SAMPLES];
    double armed = samples ? (double)t->stats[STAT_ARMED_SEEN] / (double)samples : 0;
    *switches = t->stats[STAT_SWITCHES] + n;
    *ns = t->stats[STAT_SWITCH_NS] +
          (uint64_t)((double)n * (switch_base_ns(&t->budget) + armed * (double)t->budget.switch_armed_ns));
}

void thread_fold(thread_state *into, const thread_state *from)
{
    uint64_t switches, switch_ns;
    thread_switches(from, &switches, &switch_ns);
    for (int i = 0; i < STAT_COUNT; i++)
        if (i != STAT_SWITCHES && i != STAT_SWITCH_NS)
            into->stats[i] += from->stats[i];
    into->stats[STAT_SWITCHES] += switches;
    into->stats[STAT_SWITCH_NS] += switch_ns;
    for (int r = 0; r < DROP_REASON_COUNT; r++)
        into->drops[r] += from->drops[r];
    for (int i = 0; i < from->watch.nslots; i++)
        into->stats[STAT_UNFINISHED_FOLDED] += from->watch.slot[i].armed != 0;
    into->stats[STAT_THREADS_FOLDED]++;
    into->clock_ns += from->clock_ns;
    budget_fold(&into->budget, &from->budget);
}

static int thread_quiet(thread_state *t)
{
    return !__atomic_load_n(&t->in_handler, __ATOMIC_SEQ_CST);
}

int thread_wait_quiet(thread_state *t)
{
    /* Spin first, then yield, then sleep: a handler takes microseconds,
     * and a nanosleep can take milliseconds (a guest's coarse timer: a
     * checkpoint there paused the handler 28 ms, and traps on a hot
     * watched address came in a storm meanwhile). */
    for (int i = 0; i < 2000; i++) {
        if (thread_quiet(t))
            return 0;
        __builtin_ia32_pause();
    }
    for (int i = 0; i < 100; i++) {
        if (thread_quiet(t))
            return 0;
        sched_yield();
    }
    for (int i = 0; i < 20000; i++) {
        if (thread_quiet(t))
            return 0;
        struct timespec pause = { 0, 50000 };
        nanosleep(&pause, NULL);
    }
    return -1;
}

int engine_spawn_thread(void *(*fn)(void *), size_t stack_size)
{
    /* The real pthread_create: the native front end interposes it to
     * profile every new thread. Every signal blocked from the thread's
     * first instruction: none is for it. */
    pthread_create_fn real = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
    pthread_attr_t attr;
    pthread_t thread;
    sigset_t all, old;
    sigfillset(&all);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, stack_size);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = (real ? real : pthread_create)(&thread, &attr, fn, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0)
        errno = rc;
    return rc == 0 ? 0 : -1;
}

void thread_after_fork_child(void)
{
    pthread_mutex_init(&arena.lock, NULL);
}

int thread_in_arena(uint64_t addr)
{
    const char *base = __atomic_load_n(&arena.base, __ATOMIC_ACQUIRE);
    return base && addr >= (uint64_t)(uintptr_t)base &&
           addr < (uint64_t)(uintptr_t)base + ARENA_SLOTS * SLOT_SIZE;
}

thread_state *thread_live(uint64_t addr)
{
    if ((addr - (uint64_t)(uintptr_t)arena.base) % SLOT_SIZE != 0)
        return NULL;
    thread_state *t = (thread_state *)(uintptr_t)addr;
    return __atomic_load_n(&t->magic, __ATOMIC_ACQUIRE) == THREAD_MAGIC ? t : NULL;
}

const char *thread_stat_name(enum thread_stat s)
{
    static const char *const names[STAT_COUNT] = {
        "samples", "armed", "declined", "replaced", "traps", "primed", "kept",
        "sample_ns", "trap_ns", "sampling_ms", "sigtrap_lost",
        "attached", "preexisting",
        "checkpoints", "checkpoint_ns", "checkpoint_pause_ns", "checkpoint_skipped",
        "code_breaks", "code_hits", "guards", "guard_declined", "weighted_pairs",
        "weight_squares", "rate_weights", "rate_weight_squares", "touched_behind",
        "past_target", "traps_at_target", "traps_clobbered", "traps_partial", "next_pass",
        "unplaced", "lifecycle_ns", "threads_folded", "unfinished_folded", "tables_grown",
        "armed_seen", "switches", "switch_ns",
    };
    return (unsigned)s < STAT_COUNT ? names[s] : "unknown";
}

/*
 * checkpoint.c - the checkpoint thread (checkpoint.h).
 *
 * Never in signal context, and never profiled (engine_spawn_thread).
 * Locks, in order: cp.lock (held for a whole pass, so
 * checkpoint_stop can wait for one), then the engine's registry lock
 * (held for one thread's copy only, so a thread that starts or ends waits
 * for at most one copy, never for a write). A copy is what the writes
 * read, so a thread may end, and write its final profile, while its
 * checkpoint is still being written: profile_build.c's naming makes the
 * final one win.
 */
#include "clock.h"
#include "checkpoint.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    uint64_t period_ns;
    const engine_frontend *fe;
    int started, stopping;
    unsigned generation;   /* runs started in this process (wasp attach again) */
    int warned;
} cp = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* One thread's copy: the state, with tables of its own. */
typedef struct cp_copy {
    thread_state *state;
    cct_node *nodes;
    pair_entry *entries;
    uint32_t nodes_cap, entries_cap;
    uint64_t pause_ns;
} cp_copy;

static void cp_copy_free(cp_copy *c)
{
    free(c->state);
    free(c->nodes);
    free(c->entries);
    memset(c, 0, sizeof(*c));
}

/* *p holds at least n elements of size elem, zeroed when new. */
static int cp_grow(void **p, uint32_t *cap, uint32_t n, size_t elem)
{
    if (n <= *cap)
        return 0;
    void *q = realloc(*p, (size_t)n * elem);
    if (!q)
        return -1;
    memset(q, 0, (size_t)n * elem);
    *p = q;
    *cap = n;
    return 0;
}

/* Room for n nodes and m entries, touched now: page faults taken here
 * are not taken while the handler stands aside. */
static int cp_reserve(cp_copy *c, uint32_t n, uint32_t m)
{
    if (!c->state && !(c->state = malloc(sizeof(*c->state))))
        return -1;
    return cp_grow((void **)&c->nodes, &c->nodes_cap, n, sizeof(*c->nodes)) == 0 &&
                   cp_grow((void **)&c->entries, &c->entries_cap, m, sizeof(*c->entries)) == 0
               ? 0 : -1;
}

/* While the handler stands aside: the tables as they are. The copy's
 * tables are only walked (cct_path, the pairs in arrival order), never
 * searched, so they go without their hash indexes. */
static void cp_take(thread_state *t, cp_copy *c)
{
    uint32_t n = t->contexts.used, m = t->pairs.used;
    *c->state = *t;
    /* The ended threads' state has no tables (engine.c: fold_ended). */
    if (n)
        memcpy(c->nodes, t->contexts.nodes, (size_t)n * sizeof(*c->nodes));
    if (m)
        memcpy(c->entries, t->pairs.entries, (size_t)m * sizeof(*c->entries));
    c->state->contexts.nodes = c->nodes;
    c->state->contexts.buckets = NULL;
    c->state->contexts.nbuckets = 0;
    c->state->contexts.cap = n;
    c->state->pairs.entries = c->entries;
    c->state->pairs.index = NULL;
    c->state->pairs.cap = m;
}

/* A thread's table past half full moves into one twice as large while
 * its handler stands aside for the copy (ids unchanged). A long run fills
 * the first ones: Rhino sampled every 100 µs for 14 s (93,000 samples, 15
 * minutes of CPU at the default interval) filled its 64 Ki-node context
 * tree and lost 14% of its samples, those of every context first seen
 * after, so a profile left running for hours would show what ran first.
 * Up to these (48 MiB of tree, 10 MiB of pairs a thread, as used). */
#define CCT_MAX_NODES (1u << 21)
#define PAIRS_MAX (1u << 18)

typedef struct cp_bigger {
    cct contexts;
    pair_table pairs;
    int has_contexts, has_pairs;
} cp_bigger;

/* Before the pause: mapping takes a while. */
static void cp_bigger_map(const thread_state *t, cp_bigger *g)
{
    memset(g, 0, sizeof(*g));
    if (t->contexts.cap && t->contexts.cap < CCT_MAX_NODES && cct_half_full(&t->contexts))
        g->has_contexts = cct_init(&g->contexts, t->contexts.cap * 2) == 0;
    if (t->pairs.cap && t->pairs.cap < PAIRS_MAX && pairs_half_full(&t->pairs))
        g->has_pairs = pairs_init(&g->pairs, t->pairs.cap * 2) == 0;
}

/* During the pause. Marked busy as the handler marks its own changes: a
 * process killed in the middle leaves the guardian a half-moved table,
 * which it must not read (engine.c, write_after_end). */
static void cp_bigger_move(thread_state *t, cp_bigger *g)
{
    if (!g->has_contexts && !g->has_pairs)
        return;
    __atomic_store_n(&t->tables_busy, 1, __ATOMIC_SEQ_CST);
    if (g->has_contexts)
        cct_move(&t->contexts, &g->contexts);
    if (g->has_pairs)
        pairs_move(&t->pairs, &g->pairs);
    t->stats[STAT_TABLES_GROWN]++;
    __atomic_store_n(&t->tables_busy, 0, __ATOMIC_SEQ_CST);
}

/* After it: the old tables (or the unused new ones). */
static void cp_bigger_unmap(cp_bigger *g)
{
    if (g->has_contexts)
        cct_destroy(&g->contexts);
    if (g->has_pairs)
        pairs_destroy(&g->pairs);
}

/* Under the registry lock: sets t's pausing flag, waits until its handler
 * is out, runs fn, clears the flag. The pause's length in *pause_ns; -1
 * (fn not run) when the handler did not go quiet. */
static int cp_paused(thread_state *t, int (*fn)(thread_state *t, void *arg), void *arg,
                     uint64_t *pause_ns)
{
    uint64_t start = clock_ns(CLOCK_MONOTONIC);
    __atomic_store_n(&t->pausing, 1, __ATOMIC_SEQ_CST);
    int rc = thread_wait_quiet(t) == 0 ? fn(t, arg) : -1;
    __atomic_store_n(&t->pausing, 0, __ATOMIC_SEQ_CST);
    *pause_ns = clock_ns(CLOCK_MONOTONIC) - start;
    return rc;
}

typedef struct cp_copy_job {
    cp_copy *copy;
    cp_bigger bigger;
} cp_copy_job;

static int cp_copy_paused(thread_state *t, void *arg)
{
    cp_copy_job *j = arg;
    if (cp_reserve(j->copy, t->contexts.used, t->pairs.used) < 0)
        return -1;
    cp_take(t, j->copy);
    cp_bigger_move(t, &j->bigger);
    return 0;
}

/* Under the registry lock (engine_with_thread). The tables may grow
 * between the reservation and the pause (the handler runs until then):
 * reserved with room to spare, and grown during the pause if not enough. */
static int cp_copy_thread(thread_state *t, void *arg)
{
    cp_copy_job j = { .copy = arg };
    cp_copy *c = j.copy;
    uint32_t n = __atomic_load_n(&t->contexts.used, __ATOMIC_RELAXED);
    uint32_t m = __atomic_load_n(&t->pairs.used, __ATOMIC_RELAXED);
    t->checkpointed = 1;   /* a checkpoint may appear: its final profile must supersede it */
    if (cp_reserve(c, n + n / 8 + 64, m + m / 8 + 64) < 0)
        return -1;
    cp_bigger_map(t, &j.bigger);
    int rc = cp_paused(t, cp_copy_paused, &j, &c->pause_ns);
    cp_bigger_unmap(&j.bigger);
    if (rc == 0) {
        /* Counted by the handler meanwhile, this copy's own included. */
        c->state->stats[STAT_CHECKPOINT_SKIPPED] =
            __atomic_load_n(&t->stats[STAT_CHECKPOINT_SKIPPED], __ATOMIC_RELAXED);
        c->state->stats[STAT_CHECKPOINTS]++;
        c->state->stats[STAT_CHECKPOINT_PAUSE_NS] += c->pause_ns;
    }
    return rc;
}

static int cp_grow_paused(thread_state *t, void *arg)
{
    cp_bigger_move(t, arg);
    return 0;
}

/* Under the registry lock: only the tables grown, no checkpoint (a tick
 * the CPU share left out, cp_gap). */
static int cp_grow_thread(thread_state *t, void *unused)
{
    cp_bigger bigger;
    uint64_t pause_ns;
    (void)unused;
    cp_bigger_map(t, &bigger);
    if (!bigger.has_contexts && !bigger.has_pairs)
        return 0;
    if (cp_paused(t, cp_grow_paused, &bigger, &pause_ns) == 0)
        t->stats[STAT_CHECKPOINT_PAUSE_NS] += pause_ns;
    cp_bigger_unmap(&bigger);
    return 0;
}

typedef struct cp_cost {
    uint64_t ns, pause_ns;
} cp_cost;

/* Under the registry lock: the checkpoint's cost goes to its thread, and
 * so into its next checkpoint and its final profile. */
static int cp_account(thread_state *t, void *arg)
{
    const cp_cost *k = arg;
    t->stats[STAT_CHECKPOINTS]++;
    t->stats[STAT_CHECKPOINT_NS] += k->ns;
    t->stats[STAT_CHECKPOINT_PAUSE_NS] += k->pause_ns;
    return 0;
}

/* One thread's checkpoint. -1 when checkpoints must stop: the run
 * directory is gone (and must not be made again by us). */
static int cp_one(uint64_t seq, cp_copy *c)
{
    char err[512];
    /* CPU time, the overhead: on a loaded machine the wall-clock time of a
     * write is mostly waiting for a CPU. */
    uint64_t start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    if (engine_with_thread(seq, cp_copy_thread, c) != 0)
        return 0;   /* ended meanwhile, or could not be copied: its final write will come */
    int rc = engine_write_checkpoint(c->state, clock_ns(CLOCK_REALTIME) / 1000000, err, sizeof(err));
    int saved = errno;
    cp_cost k = { clock_ns(CLOCK_THREAD_CPUTIME_ID) - start, c->pause_ns };
    engine_with_thread(seq, cp_account, &k);
    if (rc == 0)
        return 0;
    if (saved == ENOENT || saved == ENOTDIR) {
        fprintf(stderr, "[wasp] WARN the run directory is gone (%s); checkpoints stop\n", err);
        return -1;
    }
    if (!cp.warned++)
        fprintf(stderr, "[wasp] WARN checkpoint not written: %s\n", err);
    return 0;
}

/* Every live thread, one at a time; holding cp.lock. */
/* Every live thread's tables grown where they are past half full. */
static void cp_grow_pass(void)
{
    uint64_t *seqs;
    size_t n = engine_live_seqs(&seqs);
    for (size_t i = 0; i < n && !__atomic_load_n(&cp.stopping, __ATOMIC_ACQUIRE); i++)
        engine_with_thread(seqs[i], cp_grow_thread, NULL);
    free(seqs);
}

static int cp_pass(void)
{
    uint64_t *seqs;
    cp_copy c = { 0 };
    int rc = 0;
    size_t n = engine_live_seqs(&seqs);
    for (size_t i = 0; i < n && rc == 0 && !__atomic_load_n(&cp.stopping, __ATOMIC_ACQUIRE); i++)
        rc = cp_one(seqs[i], &c);
    cp_copy_free(&c);
    free(seqs);
    return rc;
}

static void cp_deadline(struct timespec *ts, uint64_t ns)
{
    ts->tv_sec = (time_t)(ns / 1000000000ULL);
    ts->tv_nsec = (long)(ns % 1000000000ULL);
}

/* The time to the next checkpoint: the period, or, when one cost more than
 * 1/CP_CPU_SHARE of it, that many times its CPU time, so the checkpoint
 * thread never takes more than 1% of a CPU; the ticks between only grow
 * the tables. A checkpoint's cost grows with the threads' tables (every
 * frame is named again): a Rhino run whose main thread held 17,000 pairs
 * averaged 140 ms a checkpoint (54 of them, every second under --flush 1s). */
#define CP_CPU_SHARE 100

static uint64_t cp_gap(uint64_t pass_cpu_ns)
{
    return pass_cpu_ns * CP_CPU_SHARE > cp.period_ns ? pass_cpu_ns * CP_CPU_SHARE : cp.period_ns;
}

static void *cp_main(void *unused)
{
    (void)unused;
    prctl(PR_SET_NAME, "wasp-checkpoint", 0, 0, 0);   /* for top, /proc and tests */
    if (cp.fe->checkpoint_thread_begin && cp.fe->checkpoint_thread_begin() < 0) {
        fprintf(stderr, "[wasp] WARN the checkpoint thread cannot name frames; profiles are "
                "written only when threads end\n");
        return NULL;
    }
    pthread_mutex_lock(&cp.lock);
    for (;;) {
        unsigned run = cp.generation;
        uint64_t next = clock_ns(CLOCK_MONOTONIC) + cp.period_ns, write_at = next;
        while (!__atomic_load_n(&cp.stopping, __ATOMIC_ACQUIRE)) {
            struct timespec ts;
            cp_deadline(&ts, next);
            if (pthread_cond_timedwait(&cp.wake, &cp.lock, &ts) != ETIMEDOUT)
                continue;
            if (__atomic_load_n(&cp.stopping, __ATOMIC_ACQUIRE))
                break;
            if (next >= write_at) {
                uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
                if (cp_pass() < 0)
                    break;
                write_at = next + cp_gap(clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu);
            } else {
                cp_grow_pass();   /* cheap: tables fill between checkpoints */
            }
            /* A pass longer than the period: the next starts a period after it. */
            uint64_t now = clock_ns(CLOCK_MONOTONIC);
            next = next + cp.period_ns > now ? next + cp.period_ns : now + cp.period_ns;
        }
        /* Parked until another run starts in this process (`wasp attach`
         * again), not ended: a thread attached to a JVM must not end
         * attached, and detaching while the JVM shuts down is no safer.
         * The process's end ends it. */
        while (cp.generation == run)
            pthread_cond_wait(&cp.wake, &cp.lock);
    }
    return NULL;
}

static int cp_init_wake(void)
{
    pthread_condattr_t a;
    if (pthread_condattr_init(&a) != 0)
        return -1;
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&cp.wake, &a);
    pthread_condattr_destroy(&a);
    return rc == 0 ? 0 : -1;
}

int checkpoint_start(uint64_t period_ns, const engine_frontend *fe)
{
    if (__atomic_exchange_n(&cp.started, 1, __ATOMIC_ACQ_REL)) {
        /* A later run in this process: the parked thread takes it on. */
        pthread_mutex_lock(&cp.lock);
        cp.period_ns = period_ns;
        cp.fe = fe;
        cp.generation++;
        __atomic_store_n(&cp.stopping, 0, __ATOMIC_RELEASE);
        pthread_cond_signal(&cp.wake);
        pthread_mutex_unlock(&cp.lock);
        return 0;
    }
    cp.period_ns = period_ns;
    cp.fe = fe;
    cp.stopping = 0;
    if (cp_init_wake() < 0)
        return -1;
    /* Symbolizing (libdw, JVMTI) and formatting want room. */
    return engine_spawn_thread(cp_main, 1024 * 1024);
}

void checkpoint_stop(void)
{
    struct timespec until;
    if (!__atomic_load_n(&cp.started, __ATOMIC_ACQUIRE))
        return;
    __atomic_store_n(&cp.stopping, 1, __ATOMIC_RELEASE);
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 2;
    if (pthread_mutex_timedlock(&cp.lock, &until) != 0)
        return;
    pthread_cond_signal(&cp.wake);
    pthread_mutex_unlock(&cp.lock);
}

void checkpoint_after_fork_child(void)
{
    pthread_mutex_init(&cp.lock, NULL);
    cp.started = 0;
    cp.stopping = 0;
    cp.warned = 0;
}

/*
 * profile_build.c - from a thread's context tree and pair table to the plain
 * profile of profile.h. Normal context: allocation and symbol lookup are fine.
 */
#include "clock.h"
#include "profile_build.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "decode.h"
#include "msan_scope.h"

/* Maps cct node ids and (frame, leaf) keys to output indices. Tables are
 * small (only contexts that pairs use), so a linear-probe map suffices. */
typedef struct index_map {
    uint64_t *keys_a, *keys_b, *keys_c;
    uint32_t *values;
    size_t cap, used;
} index_map;

static int map_init(index_map *m, size_t n)
{
    m->cap = 16;
    m->used = 0;
    while (m->cap < n * 2)
        m->cap *= 2;
    m->keys_a = calloc(m->cap, sizeof(uint64_t));
    m->keys_b = calloc(m->cap, sizeof(uint64_t));
    m->keys_c = calloc(m->cap, sizeof(uint64_t));
    m->values = calloc(m->cap, sizeof(uint32_t));
    return m->keys_a && m->keys_b && m->keys_c && m->values ? 0 : -1;
}

static void map_free(index_map *m)
{
    free(m->keys_a);
    free(m->keys_b);
    free(m->keys_c);
    free(m->values);
}

/* Returns the slot for (a, b, c); *found tells whether it was already there.
 * Values are stored +1 so that 0 means empty. NULL when a new key would
 * fill the table past half: the tables are sized from the thread's counts,
 * so that never happens unless those counts were wrong, and then a pair is
 * lost rather than the probe loop never ending. */
static uint32_t *map_slot(index_map *m, uint64_t a, uint64_t b, uint64_t c, int *found)
{
    uint64_t h = a * 0x9E3779B97F4A7C15ULL ^ b * 0xC2B2AE3D27D4EB4FULL ^ c * 0x165667B19E3779F9ULL;
    size_t i = (size_t)(h >> 20) & (m->cap - 1);
    while (m->values[i] && (m->keys_a[i] != a || m->keys_b[i] != b || m->keys_c[i] != c))
        i = (i + 1) & (m->cap - 1);
    *found = m->values[i] != 0;
    if (!*found && (m->used + 1) * 2 > m->cap)
        return NULL;
    m->used += !*found;
    m->keys_a[i] = a;
    m->keys_b[i] = b;
    m->keys_c[i] = c;
    return &m->values[i];
}

typedef struct builder {
    const thread_state *t;
    const engine_frontend *fe;
    profile *p;
    index_map ctx_map, frame_map;
    size_t max_frames, max_contexts;   /* what p's arrays were allocated for */
    uint8_t *inlined;          /* per output frame that starts a code frame's names: how many */
} builder;

static int code_overlaps(const profile *p, const prof_code *c)
{
    for (size_t i = 0; i < p->ncodes; i++)
        if (p->codes[i].start < c->start + c->size && c->start < p->codes[i].start + p->codes[i].size)
            return 1;
    return 0;
}

/* The generated code an instruction pseudo-frame lies in, once per blob,
 * when the front end keeps such code (the JVM's JIT methods). Code that
 * overlaps a blob already taken (the range was reused by newer code) is
 * left out: a pc must name one blob. */
static void add_code(builder *b, frame_key insn)
{
    prof_code c;
    profile *p = b->p;
    if (!b->fe->code || b->fe->code(insn, &c) < 0)
        return;
    prof_code *grown = code_overlaps(p, &c) ? NULL : realloc(p->codes, sizeof(*grown) * (p->ncodes + 1));
    if (!grown) {
        prof_code_clear(&c);
        return;
    }
    p->codes = grown;
    p->codes[p->ncodes++] = c;
}

/* The instruction text of a FRAME_INSN pseudo-frame, and its code blob. */
static void name_instruction(builder *b, frame_key insn, prof_frame *pf)
{
    char text[160] = "";
    if (b->fe->instruction)
        b->fe->instruction(insn, text, sizeof(text));
    else
        decode_format(insn.id, 0, text, sizeof(text));
    free(pf->instruction);
    pf->instruction = strdup(text);
    pf->pc = insn.id;
    add_code(b, insn);
}

static void frame_clear(prof_frame *f)
{
    free(f->function);
    free(f->file);
    free(f->module);
    free(f->instruction);
}

/* Room for n more output frames: a code frame names one per function
 * inlined there, so the arrays grow past the first guess. */
static int frames_room(builder *b, size_t n)
{
    profile *p = b->p;
    if (p->nframes + n <= b->max_frames)
        return 0;
    size_t cap = (p->nframes + n) * 2;
    prof_frame *frames = realloc(p->frames, cap * sizeof(*frames));
    if (!frames)
        return -1;
    p->frames = frames;
    uint8_t *inlined = realloc(b->inlined, cap);
    if (!inlined)
        return -1;
    b->inlined = inlined;
    b->max_frames = cap;
    return 0;
}

/* The output frames naming code frame f: consecutive, the first returned,
 * *count of them (more than one where the compiler inlined functions).
 * insn, when not NULL, is the accessing instruction inside this leaf
 * frame (a FRAME_INSN pseudo-frame): it names the innermost function's
 * instruction. */
static uint32_t add_frame(builder *b, frame_key f, int leaf, const frame_key *insn, int *count)
{
    int found;
    prof_frame names[ENGINE_MAX_INLINED];
    /* pcs stay below 2^47: the front end's data (a code blob id) fits above. */
    uint64_t insn_key = insn ? insn->id ^ (FRAME_AUX_DATA(insn->aux) << 47) : 0;
    uint32_t *slot = map_slot(&b->frame_map, f.id, f.aux * 2 + (uint64_t)leaf, insn_key, &found);
    if (!slot)
        return UINT32_MAX;
    if (found) {
        *count = b->inlined[*slot - 1];
        return *slot - 1;
    }
    memset(names, 0, sizeof(names));
    int n = b->fe->symbolize(f, leaf, names, ENGINE_MAX_INLINED);
    n = n < 1 ? 1 : n > ENGINE_MAX_INLINED ? ENGINE_MAX_INLINED : n;
    if (frames_room(b, (size_t)n) < 0) {
        for (int i = 0; i < n; i++)
            frame_clear(&names[i]);
        return UINT32_MAX;
    }
    if (insn)
        name_instruction(b, *insn, &names[0]);
    uint32_t at = (uint32_t)b->p->nframes;
    memcpy(&b->p->frames[at], names, sizeof(prof_frame) * (size_t)n);
    b->p->nframes += (size_t)n;
    b->inlined[at] = (uint8_t)n;
    *slot = at + 1;
    *count = n;
    return at;
}

static uint32_t add_context(builder *b, uint32_t node)
{
    frame_key path[ENGINE_MAX_FRAMES];
    int found;
    uint32_t *slot = map_slot(&b->ctx_map, node, 0, 0, &found);
    if (!slot || b->p->ncontexts >= b->max_contexts)
        return UINT32_MAX;
    if (found)
        return *slot - 1;
    int n = cct_path(&b->t->contexts, node, path, ENGINE_MAX_FRAMES);
    int first = n >= 2 && (path[0].aux & FRAME_TAG_MASK) == FRAME_INSN;
    prof_context *c = &b->p->contexts[b->p->ncontexts];
    uint32_t names[PROFILE_MAX_CONTEXT_FRAMES];
    size_t nnames = 0;
    if (n - first < 1)
        return UINT32_MAX;  /* the pair is left out rather than the whole profile lost */
    for (int i = first; i < n; i++) {
        int count;
        uint32_t at = add_frame(b, path[i], i == first, i == first && first ? &path[0] : NULL, &count);
        if (at == UINT32_MAX)
            return UINT32_MAX;
        for (int k = 0; k < count && nnames < PROFILE_MAX_CONTEXT_FRAMES; k++)
            names[nnames++] = at + (uint32_t)k;   /* a deep stack of inlined code is cut at its root */
    }
    c->frames = malloc(sizeof(uint32_t) * nnames);
    if (!c->frames)
        return UINT32_MAX;
    memcpy(c->frames, names, sizeof(uint32_t) * nnames);
    c->nframes = (uint32_t)nnames;
    *slot = (uint32_t)++b->p->ncontexts;
    return *slot - 1;
}

static void add_stat(profile *p, const char *name, uint64_t value)
{
    p->stats[p->nstats].name = strdup(name);
    p->stats[p->nstats].value = value;
    p->nstats++;
}

/* The overhead budget's account (docs/profile-format.md, "Budget"),
 * the window still open included. */
#define BUDGET_STATS 11

static void add_budget_stats(profile *p, const thread_state *t)
{
    budget_state b = t->budget;
    budget_flush(&b);
    add_stat(p, "budget.ppm", b.ppm);
    add_stat(p, "budget.signal_cost_ns", b.signal_cost_ns);
    add_stat(p, "budget.switch_cost_ns", b.switch_cost_ns);
    add_stat(p, "budget.switch_armed_ns", b.switch_armed_ns);
    add_stat(p, "budget.switch_floor_ns", b.switch_floor_ns);
    add_stat(p, "budget.cpu_ns", b.cpu_ns);
    add_stat(p, "budget.wasp_ns", b.wasp_ns);
    add_stat(p, "budget.cut_ns", b.cut_ns);
    add_stat(p, "budget.periods_milli", b.periods_milli);
    add_stat(p, "budget.interval_max", b.period_max);
    add_stat(p, "budget.clock_ns", t->clock_ns);
}

static void add_stats(profile *p, const thread_state *t)
{
    char name[64];
    uint64_t unfinished = t->stats[STAT_UNFINISHED_FOLDED], switches, switch_ns;
    for (int i = 0; i < STAT_COUNT; i++)
        if (i != STAT_UNFINISHED_FOLDED && i != STAT_SWITCHES && i != STAT_SWITCH_NS)
            add_stat(p, thread_stat_name((enum thread_stat)i), t->stats[i]);
    thread_switches(t, &switches, &switch_ns);
    add_stat(p, "switches", switches);
    add_stat(p, "switch_ns", switch_ns);
    for (int r = 1; r < DROP_REASON_COUNT; r++) {
        snprintf(name, sizeof(name), "drop.%s", drop_reason_name((enum drop_reason)r));
        add_stat(p, name, t->drops[r]);
    }
    for (int i = 0; i < t->watch.nslots; i++)
        unfinished += t->watch.slot[i].armed != 0;
    add_stat(p, "unfinished", unfinished);
    add_budget_stats(p, t);
}

static char *read_command_line(void)
{
    char buf[4096];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return strdup("");
    for (ssize_t i = 0; i < n - 1; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[n] = '\0';
    return strdup(buf);
}

/* The name now, not at thread start: runtimes name threads after starting them. */
static char *thread_name(const thread_state *t)
{
    char path[64], name[64];
    if (t->tid == 0)
        return strdup(t->name);   /* the ended threads' profile (engine.c) */
    snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)t->tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, name, sizeof(name) - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return strdup(t->name);
    name[n] = '\0';
    name[strcspn(name, "\n")] = '\0';
    return strdup(name);
}

static void free_codes(profile *p)
{
    for (size_t i = 0; i < p->ncodes; i++)
        prof_code_clear(&p->codes[i]);
    free(p->codes);
    p->codes = NULL;
    p->ncodes = 0;
}

static void free_built(profile *p)
{
    free_codes(p);
    for (size_t i = 0; i < p->nframes; i++)
        frame_clear(&p->frames[i]);
    for (size_t i = 0; i < p->ncontexts; i++)
        free(p->contexts[i].frames);
    for (size_t i = 0; i < p->nstats; i++)
        free(p->stats[i].name);
    free(p->frames);
    free(p->contexts);
    free(p->pairs);
    free(p->stats);
    free(p->thread_name);
    free(p->command);
}

static int build(builder *b, const profile_build_env *env, uint64_t checkpoint_ms)
{
    const wasp_options *o = env->opts;
    const char *sampler_name = env->sampler_name;
    const thread_state *t = b->t;
    profile *p = b->p;
    size_t npairs = t->pairs.used;
    size_t max_ctx = npairs * 2;
    /* A frame is a tree node, once as a leaf and once as a caller at most. */
    size_t max_frames = (size_t)t->contexts.used * 2;

    snprintf(p->mode, sizeof(p->mode), "%s", options_mode_name(o->mode));
    snprintf(p->sampler, sizeof(p->sampler), "%s", sampler_name);
    snprintf(p->watch_check, sizeof(p->watch_check), "%s", env->watch_check);
    p->pid = env->pid;
    p->tid = t->tid;
    p->thread_name = thread_name(t);
    p->command = read_command_line();
    p->interval = strcmp(sampler_name, "pmu") == 0 ? o->period : o->interval_ns;
    p->fp_tolerance = o->fp_tolerance;
    p->stats = calloc(STAT_COUNT + DROP_REASON_COUNT + 2 + BUDGET_STATS, sizeof(prof_stat));
    p->pairs = calloc(npairs ? npairs : 1, sizeof(prof_pair));
    p->contexts = calloc(max_ctx ? max_ctx : 1, sizeof(prof_context));
    p->frames = calloc(max_frames + 1, sizeof(prof_frame));
    b->inlined = calloc(max_frames + 1, 1);
    b->max_frames = max_frames + 1;
    b->max_contexts = max_ctx;
    if (!p->stats || !p->pairs || !p->contexts || !p->frames || !b->inlined ||
        map_init(&b->ctx_map, max_ctx) < 0 || map_init(&b->frame_map, max_frames) < 0)
        return -1;
    add_stats(p, t);
    if (checkpoint_ms)
        add_stat(p, PROFILE_CHECKPOINT_STAT, checkpoint_ms);
    /* Bounded by what was counted at entry: the thread must not take
     * signals any more, but if one slipped through, its pair is left out
     * instead of written past the arrays. */
    for (uint32_t i = 0; i < t->pairs.cap && p->npairs < npairs; i++) {
        const pair_entry *e = &t->pairs.entries[i];
        if (!e->watch_ctx)
            continue;
        uint32_t watch = add_context(b, e->watch_ctx), trap = add_context(b, e->trap_ctx);
        if (watch == UINT32_MAX || trap == UINT32_MAX)
            continue;
        prof_pair *pp = &p->pairs[p->npairs++];
        pp->watch_ctx = watch;
        pp->trap_ctx = trap;
        pp->count = e->count;
        pp->bytes = e->bytes;
        pp->wasteful_bytes = e->wasteful;
        pp->approx_bytes = e->approx;
    }
    return 0;
}

static uint64_t sequence;

/* A profile written at its thread's end delays the thread: its building
 * (the naming of frames, most of the cost) counts in the thread's
 * lifecycle_ns. Publishing it (a few system calls) happens after the
 * count is written, and is not in it. */
static void count_build(profile *p, const thread_state *t, uint64_t began_ns)
{
    const char *name = thread_stat_name(STAT_LIFECYCLE_NS);
    for (size_t i = 0; t->timed_write && i < p->nstats; i++)
        if (!strcmp(p->stats[i].name, name))
            p->stats[i].value += clock_ns(CLOCK_THREAD_CPUTIME_ID) - began_ns;
}

/* <tid>-<seq>.wasp or .checkpoint: the number, else -1. */
static int64_t seq_of_name(const char *name)
{
    const char *dash = strchr(name, '-');
    char *end;
    if (!dash || dash[1] < '0' || dash[1] > '9')
        return -1;
    unsigned long long n = strtoull(dash + 1, &end, 10);
    if (strcmp(end, ".wasp") != 0 && strcmp(end, PROFILE_CHECKPOINT_SUFFIX) != 0)
        return -1;
    return n < INT64_MAX ? (int64_t)n : -1;
}

/* An image exec'd by a profiled one writes into the same pid directory:
 * numbering after the files already there keeps the earlier image's (the
 * main thread keeps its tid across exec). */
void profile_build_number_from(const char *dir)
{
    uint64_t n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));) {
        int64_t seq = seq_of_name(e->d_name);
        if (seq >= 0 && (uint64_t)seq >= n)
            n = (uint64_t)seq + 1;
    }
    closedir(d);
    __atomic_store_n(&sequence, n, __ATOMIC_RELAXED);
}

/* A thread id can be profiled twice (the JVM re-attaches its main thread
 * as DestroyJavaVM; an exec'd image keeps its pid and main tid): the
 * number keeps both. */
uint64_t profile_build_next_seq(void)
{
    return __atomic_fetch_add(&sequence, 1, __ATOMIC_RELAXED);
}

int profile_build_name(char *buf, size_t len, const char *dir, int tid, uint64_t seq,
                       int checkpoint)
{
    int n = snprintf(buf, len, "%s/%d-%llu%s", dir, tid, (unsigned long long)seq,
                     checkpoint ? PROFILE_CHECKPOINT_SUFFIX : ".wasp");
    return n > 0 && (size_t)n < len ? 0 : -1;
}

/* The final profile supersedes the checkpoint: whichever of the two
 * writers publishes second removes the checkpoint, so none is left after
 * a normal end (the report also ignores one next to its final profile). */
static void drop_checkpoint(const thread_state *t, const char *dir, int checkpoint_written)
{
    char ckpt[700], final[700];
    if (profile_build_name(ckpt, sizeof ckpt, dir, (int)t->tid, t->seq, 1) < 0 ||
        profile_build_name(final, sizeof final, dir, (int)t->tid, t->seq, 0) < 0)
        return;
    if (!checkpoint_written || access(final, F_OK) == 0)
        unlink(ckpt);
}

/* A MemorySanitizer program ended at its first profile write (exit 1,
 * "use-of-uninitialized-value in dwfl_linux_proc_report"): msan_scope.h. */
static int build_and_write(const thread_state *t, const profile_build_env *env,
                           uint64_t checkpoint_ms, char *err, size_t errlen);

int profile_build_write(const thread_state *t, const profile_build_env *env,
                        uint64_t checkpoint_ms, char *err, size_t errlen)
{
    msan_checks(0);
    int rc = build_and_write(t, env, checkpoint_ms, err, errlen);
    msan_checks(1);
    return rc;
}

static int build_and_write(const thread_state *t, const profile_build_env *env,
                           uint64_t checkpoint_ms, char *err, size_t errlen)
{
    profile p;
    builder b = { .t = t, .fe = env->fe, .p = &p };
    char path[700];
    int rc;

    memset(&p, 0, sizeof(p));
    uint64_t began_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);   /* as engine.c's LIFECYCLE_CLOCK */
    int built = build(&b, env, checkpoint_ms);
    if (built == 0)
        count_build(&p, t, began_ns);
    if (built < 0) {
        snprintf(err, errlen, "out of memory while writing the profile of thread %d", (int)t->tid);
        errno = ENOMEM;
        rc = -1;
    } else if (profile_build_name(path, sizeof path, env->dir, (int)t->tid, t->seq,
                                  checkpoint_ms != 0) < 0) {
        snprintf(err, errlen, "the output directory's name is too long — pass a shorter -o DIR");
        errno = ENAMETOOLONG;
        rc = -1;
    } else {
        rc = profile_write(&p, path, err, errlen);
        /* Saved code is a bonus: never lose the thread's data for it. */
        if (rc < 0 && p.ncodes) {
            free_codes(&p);
            rc = profile_write(&p, path, err, errlen);
        }
    }
    int saved = errno;
    if (rc == 0)
        drop_checkpoint(t, env->dir, checkpoint_ms != 0);
    map_free(&b.ctx_map);
    map_free(&b.frame_map);
    free(b.inlined);
    free_built(&p);
    errno = saved;
    return rc;
}

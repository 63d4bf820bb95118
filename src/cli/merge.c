/*
 * merge.c - coalesces thread profiles into the report model (merge.h).
 *
 * Owns context identity and pair coalescing. A context's identity is a byte
 * string: the frame count, then function, file and line of every frame leaf
 * first, each ended by a NUL. The instruction is not part of it: a JIT or
 * compiler that unrolls a loop makes several instructions of one source
 * line, and the user fixes the line; the instruction shown is that of the
 * occurrence with the most bytes, one in JIT code whose bytes the profile
 * kept first, for its listing (ctx_prefer_leaf, merge_code.c). The reader
 * rejects NUL inside fields, so two contexts are symbolically equal exactly
 * when their keys are equal. Profiles are merged one at a time so a run with
 * many threads never needs all of them in memory at once.
 */
#include "merge_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct merge_ctx_key {
    const char *bytes;
    size_t len;
} merge_ctx_key;

uint64_t merge_hash_more(uint64_t h, const void *data, size_t len)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < len; i++) h = (h ^ b[i]) * 1099511628211ull;    /* FNV-1a */
    return h;
}

static uint64_t merge_hash(const void *data, size_t len)
{
    return merge_hash_more(MERGE_FNV, data, len);
}

static int map_rehash(struct merge_map *map)
{
    size_t ncap = map->cap ? map->cap * 2 : 64;
    merge_slot *s = malloc(ncap * sizeof *s);
    if (!s) return -1;
    for (size_t i = 0; i < ncap; i++) s[i].index = MERGE_NONE;
    for (size_t i = 0; i < map->cap; i++) {
        if (map->slots[i].index == MERGE_NONE) continue;
        size_t j = map->slots[i].hash & (ncap - 1);
        while (s[j].index != MERGE_NONE) j = (j + 1) & (ncap - 1);
        s[j] = map->slots[i];
    }
    free(map->slots);
    map->slots = s;
    map->cap = ncap;
    return 0;
}

size_t merge_map_find(const merge_model *m, const struct merge_map *map, uint64_t h,
                      merge_eq_fn eq, const void *key)
{
    if (!map->cap) return MERGE_NONE;
    for (size_t j = h & (map->cap - 1);; j = (j + 1) & (map->cap - 1)) {
        const merge_slot *s = &map->slots[j];
        if (s->index == MERGE_NONE) return MERGE_NONE;
        if (s->hash == h && eq(m, s->index, key)) return s->index;
    }
}

int merge_map_insert(struct merge_map *map, uint64_t h, size_t index)
{
    if ((map->n + 1) * 2 > map->cap && map_rehash(map) != 0) return -1;
    size_t j = h & (map->cap - 1);
    while (map->slots[j].index != MERGE_NONE) j = (j + 1) & (map->cap - 1);
    map->slots[j].hash = h;
    map->slots[j].index = index;
    map->n++;
    return 0;
}

static int ctx_eq(const merge_model *m, size_t index, const void *key)
{
    const merge_ctx_key *k = key;
    const merge_ctx *c = m->contexts[index];
    return c->keylen == k->len && memcmp(c->key, k->bytes, k->len) == 0;
}

static int pair_eq(const merge_model *m, size_t index, const void *key)
{
    const size_t *ids = key;
    return m->pairs[index].watch_id == ids[0] && m->pairs[index].trap_id == ids[1];
}

/* Counters from corrupt-but-checksummed files must not wrap around. */
uint64_t merge_sat_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

int merge_grow(void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap) return 0;
    size_t ncap = *cap ? *cap * 2 : 16;
    void *a = realloc(*arr, ncap * elem);
    if (!a) return -1;
    *arr = a;
    *cap = ncap;
    return 0;
}

/* ---- contexts ---- */

static size_t key_put(char *buf, size_t at, const char *s, size_t n)
{
    if (buf) memcpy(buf + at, s, n);
    return at + n;
}

/* Writes c's identity into buf (when not NULL); returns its length. */
static size_t ctx_key_fill(const profile *p, const prof_context *c, char *buf)
{
    char num[16];
    size_t at = key_put(buf, 0, num, (size_t)snprintf(num, sizeof num, "%u", c->nframes) + 1);
    for (uint32_t i = 0; i < c->nframes; i++) {
        const prof_frame *f = &p->frames[c->frames[i]];
        at = key_put(buf, at, f->function, strlen(f->function) + 1);
        at = key_put(buf, at, f->file, strlen(f->file) + 1);
        at = key_put(buf, at, num, (size_t)snprintf(num, sizeof num, "%u", f->line) + 1);
    }
    return at;
}

static void ctx_free(merge_ctx *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->nframes; i++) {
        free(c->frames[i].function);
        free(c->frames[i].file);
        free(c->frames[i].module);
    }
    free(c->frames);
    free(c->instruction);
    free(c->key);
    free(c);
}

/* Builds a merged context owning copies of c's strings; takes key (freed
 * on failure too). */
static merge_ctx *ctx_new(const profile *p, const prof_context *c, char *key, size_t keylen,
                          size_t code)
{
    merge_ctx *mc = calloc(1, sizeof *mc);
    if (!mc) {
        free(key);
        return NULL;
    }
    mc->key = key;
    mc->keylen = keylen;
    mc->frames = calloc(c->nframes, sizeof *mc->frames);
    mc->instruction = strdup(p->frames[c->frames[0]].instruction);
    mc->pc = p->frames[c->frames[0]].pc;
    mc->code = code;
    int ok = mc->frames && mc->instruction;
    for (uint32_t i = 0; ok && i < c->nframes; i++) {
        const prof_frame *f = &p->frames[c->frames[i]];
        merge_frame *mf = &mc->frames[mc->nframes++];
        mf->function = strdup(f->function);
        mf->file = strdup(f->file);
        mf->module = strdup(f->module);
        mf->line = f->line;
        ok = mf->function && mf->file && mf->module;
    }
    if (!ok) {
        ctx_free(mc);
        return NULL;
    }
    return mc;
}

/* The leaf instruction shown for a merged context: an occurrence in JIT
 * code (whose listing the report can show) beats one outside, then the
 * occurrence with more bytes beats one with fewer, so the instruction shown
 * is one that really made most of the accesses. 0, or -1 when out of memory. */
static int ctx_prefer_leaf(merge_model *m, merge_code_src *src, merge_ctx *mc,
                           const prof_frame *leaf, uint64_t weight)
{
    size_t code = MERGE_NO_CODE;
    if (src->order && merge_code_at(m, src, leaf->pc, &code) != 0) return -1;
    int has = code != MERGE_NO_CODE, had = mc->code != MERGE_NO_CODE;
    if (has < had || (has == had && weight <= mc->leaf_weight)) return 0;
    mc->leaf_weight = weight;
    char *insn = strdup(leaf->instruction);
    if (!insn) return -1;
    free(mc->instruction);
    mc->instruction = insn;
    mc->pc = leaf->pc;
    mc->code = code;
    return 0;
}

/* Returns the model index of p's context ci, adding it when new. */
static size_t ctx_intern(merge_model *m, merge_code_src *src, uint32_t ci, uint64_t weight)
{
    const profile *p = src->p;
    const prof_context *c = &p->contexts[ci];
    const prof_frame *leaf = &p->frames[c->frames[0]];
    size_t code, len = ctx_key_fill(p, c, NULL);
    char *key = malloc(len);
    if (!key) return MERGE_NONE;
    ctx_key_fill(p, c, key);
    merge_ctx_key k = { key, len };
    uint64_t h = merge_hash(key, len);
    size_t idx = merge_map_find(m, m->ctx_map, h, ctx_eq, &k);
    if (idx != MERGE_NONE) {
        free(key);
        return ctx_prefer_leaf(m, src, m->contexts[idx], leaf, weight) == 0 ? idx : MERGE_NONE;
    }
    if (merge_grow((void **)&m->contexts, &m->cap_contexts, m->ncontexts,
                   sizeof *m->contexts) != 0 || merge_code_at(m, src, leaf->pc, &code) != 0) {
        free(key);
        return MERGE_NONE;
    }
    merge_ctx *mc = ctx_new(p, c, key, len, code);
    if (!mc) return MERGE_NONE;     /* ctx_new freed key with mc */
    mc->leaf_weight = weight;
    if (merge_map_insert(m->ctx_map, h, m->ncontexts) != 0) {
        ctx_free(mc);
        return MERGE_NONE;
    }
    m->contexts[m->ncontexts] = mc;
    return m->ncontexts++;
}

/* ---- pairs, stats, header ---- */

static int pair_add(merge_model *m, size_t w, size_t t, const prof_pair *q)
{
    size_t ids[2] = { w, t };
    uint64_t h = merge_hash(ids, sizeof ids);
    size_t idx = merge_map_find(m, m->pair_map, h, pair_eq, ids);
    if (idx == MERGE_NONE) {
        if (merge_grow((void **)&m->pairs, &m->cap_pairs, m->npairs, sizeof *m->pairs) != 0 ||
            merge_map_insert(m->pair_map, h, m->npairs) != 0)
            return -1;
        idx = m->npairs++;
        memset(&m->pairs[idx], 0, sizeof m->pairs[idx]);
        m->pairs[idx].watch_id = w;
        m->pairs[idx].trap_id = t;
    }
    merge_pair *mp = &m->pairs[idx];
    mp->count = merge_sat_add(mp->count, q->count);
    mp->bytes = merge_sat_add(mp->bytes, q->bytes);
    mp->wasteful_bytes = merge_sat_add(mp->wasteful_bytes, q->wasteful_bytes);
    mp->approx_bytes = merge_sat_add(mp->approx_bytes, q->approx_bytes);
    return 0;
}

static int merge_pairs(merge_model *m, const profile *p)
{
    merge_code_src src;
    size_t n = p->ncontexts ? p->ncontexts : 1;
    size_t *map = malloc(n * sizeof *map);
    uint64_t *weight = calloc(n, sizeof *weight);   /* bytes of each context's pairs */
    if (!map || !weight || merge_code_src_init(&src, p) != 0) {
        free(map);
        free(weight);
        return -1;
    }
    for (size_t i = 0; i < p->ncontexts; i++) map[i] = MERGE_NONE;
    for (size_t i = 0; i < p->npairs; i++) {
        weight[p->pairs[i].watch_ctx] = merge_sat_add(weight[p->pairs[i].watch_ctx], p->pairs[i].bytes);
        weight[p->pairs[i].trap_ctx] = merge_sat_add(weight[p->pairs[i].trap_ctx], p->pairs[i].bytes);
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < p->npairs; i++) {
        const prof_pair *q = &p->pairs[i];
        if (map[q->watch_ctx] == MERGE_NONE)
            map[q->watch_ctx] = ctx_intern(m, &src, q->watch_ctx, weight[q->watch_ctx]);
        if (map[q->trap_ctx] == MERGE_NONE)
            map[q->trap_ctx] = ctx_intern(m, &src, q->trap_ctx, weight[q->trap_ctx]);
        if (map[q->watch_ctx] == MERGE_NONE || map[q->trap_ctx] == MERGE_NONE) rc = -1;
        else rc = pair_add(m, map[q->watch_ctx], map[q->trap_ctx], q);
    }
    merge_code_src_free(&src);
    free(map);
    free(weight);
    return rc;
}

static int stat_eq(const merge_model *m, size_t index, const void *key)
{
    return strcmp(m->stats[index].name, key) == 0;
}

/* Hashed: a profile with 40k distinct stats took 3 s by linear search. */
static int merge_stats(merge_model *m, const profile *p)
{
    for (size_t i = 0; i < p->nstats; i++) {
        const prof_stat *s = &p->stats[i];
        if (merge_budget_is_stat(s->name)) continue;   /* merge_budget.c */
        if (!strcmp(s->name, PROFILE_CHECKPOINT_STAT)) continue;   /* a time: merge_add's */
        uint64_t h = merge_hash(s->name, strlen(s->name));
        size_t j = merge_map_find(m, m->stat_map, h, stat_eq, s->name);
        if (j == MERGE_NONE) {
            j = m->nstats;
            if (merge_grow((void **)&m->stats, &m->cap_stats, m->nstats, sizeof *m->stats) != 0)
                return -1;
            m->stats[j].name = strdup(s->name);
            m->stats[j].value = 0;
            if (!m->stats[j].name || merge_map_insert(m->stat_map, h, j) != 0) {
                free(m->stats[j].name);
                return -1;
            }
            m->nstats++;
        }
        m->stats[j].value = merge_sat_add(m->stats[j].value, s->value);
    }
    return 0;
}

static int pid_eq(const merge_model *m, size_t index, const void *key)
{
    return m->pids[index] == *(const int64_t *)key;
}

static int merge_pid(merge_model *m, int64_t pid)
{
    uint64_t h = merge_hash(&pid, sizeof pid);
    if (merge_map_find(m, m->pid_map, h, pid_eq, &pid) != MERGE_NONE) return 0;
    if (merge_grow((void **)&m->pids, &m->cap_pids, m->nprocesses, sizeof *m->pids) != 0 ||
        merge_map_insert(m->pid_map, h, m->nprocesses) != 0)
        return -1;
    m->pids[m->nprocesses++] = pid;
    return 0;
}

static int seen_eq(const merge_model *m, size_t index, const void *key)
{
    return memcmp(&m->seen[index], key, sizeof m->seen[index]) == 0;
}

/* A copy of a profile (cp -r, a second path to the same file) is the same
 * thread: pid, tid and the checksum of its contents say so. 1 when p was
 * seen before, 0 when new (and now recorded), -1 when out of memory. */
static int merge_seen(merge_model *m, const profile *p)
{
    merge_profile_id id;
    memset(&id, 0, sizeof id);
    id.pid = p->pid;
    id.tid = p->tid;
    id.crc = p->crc;
    id.records = p->records;
    uint64_t h = merge_hash(&id, sizeof id);
    if (merge_map_find(m, m->seen_map, h, seen_eq, &id) != MERGE_NONE) return 1;
    if (merge_grow((void **)&m->seen, &m->cap_seen, m->nseen, sizeof *m->seen) != 0 ||
        merge_map_insert(m->seen_map, h, m->nseen) != 0)
        return -1;
    m->seen[m->nseen++] = id;
    return 0;
}

/* Takes mode, sampler and interval from the first thread; later threads
 * must agree on the mode (their bytes mean different things otherwise). */
static int merge_header(merge_model *m, const profile *p, const char *path,
                        char *err, size_t errlen)
{
    if (!m->first_path) {
        snprintf(m->mode, sizeof m->mode, "%s", p->mode);
        snprintf(m->sampler, sizeof m->sampler, "%s", p->sampler);
        snprintf(m->watch_check, sizeof m->watch_check, "%s", p->watch_check);
        m->interval = p->interval;
        m->first_path = strdup(path);
        if (!m->first_path) goto oom;
    } else if (strcmp(m->mode, p->mode) != 0) {
        snprintf(err, errlen, "mixed modes: %s is %s, %s is %s", m->first_path, m->mode,
                 path, p->mode);
        return -1;
    }
    if (strcmp(m->sampler, p->sampler) != 0) snprintf(m->sampler, sizeof m->sampler, "mixed");
    if (strcmp(m->watch_check, p->watch_check) != 0)
        snprintf(m->watch_check, sizeof m->watch_check, "mixed");
    if (m->interval != p->interval) m->interval_mixed = 1;
    if (p->fp_tolerance > m->fp_tolerance) m->fp_tolerance = p->fp_tolerance;
    if (merge_pid(m, p->pid) != 0) goto oom;
    return 0;
oom:
    snprintf(err, errlen, "%s: out of memory", path);
    return -1;
}

void merge_init(merge_model *m)
{
    memset(m, 0, sizeof *m);
    m->ctx_map = calloc(1, sizeof *m->ctx_map);
    m->pair_map = calloc(1, sizeof *m->pair_map);
    m->code_map = calloc(1, sizeof *m->code_map);
    m->stat_map = calloc(1, sizeof *m->stat_map);
    m->pid_map = calloc(1, sizeof *m->pid_map);
    m->seen_map = calloc(1, sizeof *m->seen_map);
}

int merge_add(merge_model *m, const profile *p, const char *path, char *err, size_t errlen)
{
    int seen = -1;
    if (!m->ctx_map || !m->pair_map || !m->code_map || !m->stat_map || !m->pid_map ||
        !m->seen_map || (seen = merge_seen(m, p)) < 0) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    if (seen) {
        m->duplicates++;
        return 0;
    }
    if (merge_header(m, p, path, err, errlen) != 0) return -1;
    m->nthreads += profile_threads(p);
    uint64_t at = profile_stat(p, PROFILE_CHECKPOINT_STAT);
    if (at && (!m->checkpoints++ || at < m->checkpoint_oldest_ms)) m->checkpoint_oldest_ms = at;
    if (merge_stats(m, p) != 0 || merge_pairs(m, p) != 0 || merge_budget_add(&m->budget, p) != 0) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    return 0;
}

/* ---- finishing ---- */

static int key_cmp(const merge_ctx *a, const merge_ctx *b)
{
    size_t n = a->keylen < b->keylen ? a->keylen : b->keylen;
    int c = memcmp(a->key, b->key, n);
    return c ? c : (a->keylen > b->keylen) - (a->keylen < b->keylen);
}

#define DESC(x, y) do { if ((x) != (y)) return (x) < (y) ? 1 : -1; } while (0)

/* All pairs share one denominator, so ordering by wasteful bytes is
 * ordering by fraction, without floating-point ties. Contexts break the
 * remaining ties so the order never depends on file order. */
static int pair_cmp(const void *va, const void *vb)
{
    const merge_pair *a = va, *b = vb;
    DESC(a->wasteful_bytes, b->wasteful_bytes);
    DESC(a->approx_bytes, b->approx_bytes);
    DESC(a->bytes, b->bytes);
    DESC(a->count, b->count);
    int c = key_cmp(a->watch, b->watch);
    return c ? c : key_cmp(a->trap, b->trap);
}

static int stat_cmp(const void *va, const void *vb)
{
    return strcmp(((const merge_stat *)va)->name, ((const merge_stat *)vb)->name);
}

double merge_ratio(uint64_t part, uint64_t whole)
{
    return whole ? (double)part / (double)whole : 0.0;
}

void merge_finish(merge_model *m)
{
    /* "Approximately dead" means nothing; never let such bytes show. */
    int dead = strcmp(m->mode, "dead-store") == 0;
    for (size_t i = 0; i < m->npairs; i++) {
        merge_pair *q = &m->pairs[i];
        if (dead) q->approx_bytes = 0;
        q->watch = m->contexts[q->watch_id];
        q->trap = m->contexts[q->trap_id];
        m->count = merge_sat_add(m->count, q->count);
        m->bytes = merge_sat_add(m->bytes, q->bytes);
        m->wasteful_bytes = merge_sat_add(m->wasteful_bytes, q->wasteful_bytes);
        m->approx_bytes = merge_sat_add(m->approx_bytes, q->approx_bytes);
    }
    for (size_t i = 0; i < m->npairs; i++) {
        m->pairs[i].fraction = merge_ratio(m->pairs[i].wasteful_bytes, m->bytes);
        m->pairs[i].approx_fraction = merge_ratio(m->pairs[i].approx_bytes, m->bytes);
    }
    m->fraction = merge_ratio(m->wasteful_bytes, m->bytes);
    m->approx_fraction = merge_ratio(m->approx_bytes, m->bytes);
    if (m->npairs) qsort(m->pairs, m->npairs, sizeof *m->pairs, pair_cmp);
    if (m->nstats) qsort(m->stats, m->nstats, sizeof *m->stats, stat_cmp);
    merge_spread_finish(m);
    merge_budget_finish(&m->budget);
    /* Indices into pairs moved; the pair table must not be used again. */
    if (m->pair_map) {
        free(m->pair_map->slots);
        memset(m->pair_map, 0, sizeof *m->pair_map);
    }
}

const char *merge_checkpoint_time(const merge_model *m, char *buf, size_t len)
{
    time_t at = (time_t)(m->checkpoint_oldest_ms / 1000);
    struct tm tm;
    if (!gmtime_r(&at, &tm) || !strftime(buf, len, "at %Y-%m-%d %H:%M:%S UTC", &tm))
        snprintf(buf, len, "at an unknown time");
    return buf;
}

int merge_sampler_timed(const merge_model *m)
{
    return !strcmp(m->sampler, "software") || !strcmp(m->sampler, "ctimer");
}

const char *merge_relation(const char *mode)
{
    if (!strcmp(mode, "dead-store")) return "killed by";
    if (!strcmp(mode, "silent-store")) return "rewritten silently by";
    if (!strcmp(mode, "silent-load")) return "reloaded silently by";
    return "redundant with";
}

/* After merge_finish (stats sorted by name): a binary search. */
uint64_t merge_stat_value(const merge_model *m, const char *name)
{
    size_t lo = 0, hi = m->nstats;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(m->stats[mid].name, name);
        if (c == 0) return m->stats[mid].value;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return 0;
}

void merge_free(merge_model *m)
{
    merge_budget_free(&m->budget);
    for (size_t i = 0; i < m->ncontexts; i++) ctx_free(m->contexts[i]);
    for (size_t i = 0; i < m->nstats; i++) free(m->stats[i].name);
    free(m->contexts);
    free(m->stats);
    free(m->pairs);
    free(m->pids);
    free(m->first_path);
    struct merge_map *maps[] = { m->ctx_map, m->pair_map, m->stat_map, m->pid_map, m->seen_map };
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++) {
        if (maps[i]) free(maps[i]->slots);
        free(maps[i]);
    }
    free(m->seen);
    merge_code_free_all(m);
    memset(m, 0, sizeof *m);
}

const char *merge_watch_warning(const merge_model *m, char *buf, size_t len)
{
    uint64_t armed = merge_stat_value(m, "armed");
    if (armed < MERGE_SILENT_WATCHES || merge_stat_value(m, "traps") > 0) return NULL;
    snprintf(buf, len, "%" PRIu64 " watchpoints were armed and none trapped (watch self-test: %s): "
             "this machine's debug registers probably never fire — check with `wasp doctor`",
             armed, m->watch_check[0] ? m->watch_check : "unchecked");
    return buf;
}

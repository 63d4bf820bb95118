/*
 * exact_convert.c - from the exact tool's raw file to standard profiles.
 *
 * The raw file (text, TAB-separated, fields escaped as in profiles):
 *   wasp-exact 2 / mode M / pid P / command C / written exit|exec|limit /
 *   instructions N / cut 0|1 / (Java only) code_kept B / code_left_out B
 *   thread <index> <os tid>            one per thread the program ran
 *   stat <index> <name> <value>
 *   node <id> <parent> <pc> <function> <file> <line> <module>
 *                                      a call site; parent 0 is the root
 *   code <id> <name> <start> <hex>     JIT code (Java), ids from 1: its bytes as
 *                                      copied when the JVM reported it
 *   codeline <code> <offset> <line> <function> <file>
 *                                      its line table, as the profile's codeline
 *   leaf <id> <node> <pc> <function> <file> <line> <module> <insn hex> <code>
 *                                      an accessing instruction in a caller chain;
 *                                      code: the JIT code its pc lies in, or 0
 *   pair <index> <leaf C1> <leaf C2> <count> <bytes> <wasteful> <approx64> <approx32>
 *   fold <index> <count> <bytes> <wasteful>
 *                                      pairs the tool folded (small, none approximately silent)
 *   unnamed <index> <count> <bytes> <wasteful>
 *                                      pairs with a context past the tool's table
 *                                      (EXACT_MAX_CTX): counted, not named
 *   end
 * Codes and nodes come before what refers to them. approx64/approx32 are the bytes
 * that would be approximately silent if the values were doubles / floats;
 * the C1 instruction's element type, decoded here with the sampled
 * engine's decoder, says which (if either) counts, exactly as the sampled
 * detector takes the element type from the watched instruction.
 */
#include "exact_convert.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "access.h"
#include "decode.h"
#include "exact_raw.h"
#include "merge_internal.h"
#include "profile.h"
#include "publish.h"

/* ---- one thread's profile ---- */

/* Pairs below this share of their process's monitored bytes are folded
 * into one pair per thread (FOLD_NAME -> FOLD_NAME): reports print shares
 * to 0.01%, and an interpreter run under the exact mode has millions of
 * such pairs (python3: 3.6 M pairs, a 1 GB profile, before folding). The
 * fold keeps their bytes, so Eq. 1 is unchanged. */
#define FOLD_SHARE 1e-5
#define FOLD_NAME "[pairs below 0.001% of bytes, folded]"
/* Pairs the tool could not name: more calling contexts than its table
 * holds (exact.h EXACT_MAX_CTX); the report's drop.table_full counts them. */
#define UNNAMED_NAME "[pairs past the exact mode's context table, not named]"

typedef struct builder {
    const exact_raw *r;
    uint64_t fold_below;               /* bytes under which a pair is folded */
    profile p;
    uint32_t *node_frame, *leaf_ctx;   /* ids -> index + 1 in p, 0 when not yet added */
    uint8_t *code_seen;                /* raw code ids already added or left out */
    uint32_t *code_raw;                /* p.codes index -> raw code id */
    size_t cap_frames, cap_ctx, cap_pairs, cap_stats, cap_codes, cap_code_raw;
} builder;

/* Room for element n of an array, with merge.c's one grow helper. */
#define GROW(arr, n, cap) merge_grow((void **)&(arr), &(cap), (n), sizeof(*(arr)))

/* A frame's four strings in one block starting at its function, as
 * profile_read makes them and profile_free frees them. */
static int frame_strings(prof_frame *f, const char *const src[4])
{
    char **const dst[4] = { &f->function, &f->file, &f->module, &f->instruction };
    size_t len[4], total = 0;
    for (int i = 0; i < 4; i++)
        total += (len[i] = strlen(src[i] ? src[i] : "")) + 1;
    char *block = malloc(total);
    if (!block)
        return -1;
    for (int i = 0; i < 4; i++) {
        memcpy(block, src[i] ? src[i] : "", len[i] + 1);
        *dst[i] = block;
        block += len[i] + 1;
    }
    return 0;
}

static int add_frame(builder *b, const exact_sym *sym, const char *instruction, uint32_t *out)
{
    if (GROW(b->p.frames, b->p.nframes, b->cap_frames) < 0)
        return -1;
    prof_frame *f = &b->p.frames[b->p.nframes];
    const char *const src[4] = { sym->function, sym->file, sym->module, instruction };
    if (frame_strings(f, src) < 0)
        return -1;
    f->line = sym->line;
    f->pc = sym->pc;
    *out = (uint32_t)b->p.nframes++;
    return 0;
}

static int node_frame(builder *b, uint32_t node, uint32_t *out)
{
    if (b->node_frame[node]) {
        *out = b->node_frame[node] - 1;
        return 0;
    }
    if (add_frame(b, &b->r->nodes[node].sym, "", out) < 0)
        return -1;
    b->node_frame[node] = *out + 1;
    return 0;
}

static int codes_overlap(const prof_code *a, const exact_code_raw *b)
{
    return a->start < b->start + b->size && b->start < a->start + a->size;
}

static int copy_lines(prof_code *d, const exact_code_raw *c)
{
    if (!(d->lines = calloc(c->nlines ? c->nlines : 1, sizeof(*d->lines))))
        return -1;
    for (size_t i = 0; i < c->nlines; i++) {
        prof_code_line *l = &d->lines[d->nlines++];
        l->offset = c->lines[i].offset;
        l->line = c->lines[i].line;
        l->function = strdup(c->lines[i].function);
        l->file = strdup(c->lines[i].file);
        if (!l->function || !l->file)
            return -1;
    }
    return 0;
}

/* The JIT code a leaf lies in, once a profile. Code overlapping code
 * already taken (its address reused by newer code) is left out: a pc must
 * name one code. */
static int add_code(builder *b, uint32_t id)
{
    if (!id || b->code_seen[id])
        return 0;
    const exact_code_raw *c = &b->r->codes[id];
    b->code_seen[id] = 1;
    for (size_t i = 0; i < b->p.ncodes; i++)
        if (codes_overlap(&b->p.codes[i], c))
            return 0;
    if (GROW(b->p.codes, b->p.ncodes, b->cap_codes) < 0 || GROW(b->code_raw, b->p.ncodes, b->cap_code_raw) < 0)
        return -1;
    b->code_raw[b->p.ncodes] = id;
    prof_code *d = &b->p.codes[b->p.ncodes++];
    memset(d, 0, sizeof(*d));
    d->name = strdup(c->name);
    d->start = c->start;
    d->size = c->size;
    if (!d->name || !(d->bytes = malloc(c->size)))
        return -1;
    memcpy(d->bytes, c->bytes, c->size);
    return copy_lines(d, c);
}

/* The context of a leaf: its instruction's frame, then the call sites. */
static int leaf_context(builder *b, uint32_t leaf, uint32_t *out)
{
    if (b->leaf_ctx[leaf]) {
        *out = b->leaf_ctx[leaf] - 1;
        return 0;
    }
    const exact_leaf *l = &b->r->leaves[leaf];
    uint32_t frames[EXACT_RAW_MAX_DEPTH + 1], n = 0;
    if (add_frame(b, &l->sym, l->instruction, &frames[n++]) < 0 || add_code(b, l->code) < 0)
        return -1;
    for (uint32_t node = l->node; node && n <= EXACT_RAW_MAX_DEPTH; node = b->r->nodes[node].parent)
        if (node_frame(b, node, &frames[n++]) < 0)
            return -1;
    if (GROW(b->p.contexts, b->p.ncontexts, b->cap_ctx) < 0)
        return -1;
    prof_context *c = &b->p.contexts[b->p.ncontexts];
    c->nframes = n;
    c->frames = malloc(n * sizeof(uint32_t));
    if (!c->frames)
        return -1;
    memcpy(c->frames, frames, n * sizeof(uint32_t));
    *out = (uint32_t)b->p.ncontexts++;
    b->leaf_ctx[leaf] = *out + 1;
    return 0;
}

static int add_stat(builder *b, const char *name, uint64_t value)
{
    if (GROW(b->p.stats, b->p.nstats, b->cap_stats) < 0)
        return -1;
    b->p.stats[b->p.nstats].name = strdup(name);
    b->p.stats[b->p.nstats].value = value;
    return b->p.stats[b->p.nstats++].name ? 0 : -1;
}

/* Counters the reports read (samples, armed, traps: here every access of
 * the monitored kind is sampled and armed, every pair is a trap), the
 * tool's drops, and how the run ended. Reports sum stats over threads, so
 * the process's own (cut, instructions run) go to its first thread only. */
static int add_stats(builder *b, const exact_thread_raw *t)
{
    uint64_t accesses = exact_raw_stat(t, "accesses"), pairs = exact_raw_stat(t, "pairs");
    int first = t == &b->r->threads[0];
    int bad = add_stat(b, "samples", accesses) | add_stat(b, "armed", accesses) |
              add_stat(b, "traps", pairs) |
              add_stat(b, "exact_cut", first ? (uint64_t)b->r->cut : 0) |
              add_stat(b, "exact_instructions", first ? b->r->instructions : 0) |
              add_stat(b, "exact_contexts", first ? b->r->contexts : 0);
    if (b->r->code_kept || b->r->code_left_out)
        bad |= add_stat(b, "exact_code_kept", first ? b->r->code_kept : 0) |
               add_stat(b, "exact_code_left_out", first ? b->r->code_left_out : 0);
    for (size_t i = 0; i < t->nstats; i++)
        if (!strncmp(t->stats[i].name, "drop.", 5))
            bad |= add_stat(b, t->stats[i].name, t->stats[i].value);
    return bad ? -1 : 0;
}

static uint64_t approx_bytes(const exact_raw *r, const exact_pair_raw *q)
{
    uint8_t fp = r->leaves[q->c1].fp;
    return fp == ACCESS_F64 ? q->approx64 : fp == ACCESS_F32 ? q->approx32 : 0;
}

/* A pair standing for pairs written without contexts: one frame (name),
 * one context, both sides. */
static int add_fold(builder *b, const prof_pair *fold, const char *name)
{
    const exact_sym sym = { 0, name, "", "", 0 };
    uint32_t frame;
    if (add_frame(b, &sym, "", &frame) < 0 || GROW(b->p.contexts, b->p.ncontexts, b->cap_ctx) < 0 ||
        GROW(b->p.pairs, b->p.npairs, b->cap_pairs) < 0)
        return -1;
    prof_context *c = &b->p.contexts[b->p.ncontexts];
    c->nframes = 1;
    if (!(c->frames = malloc(sizeof(uint32_t))))
        return -1;
    c->frames[0] = frame;
    prof_pair q = *fold;
    q.watch_ctx = q.trap_ctx = (uint32_t)b->p.ncontexts++;
    b->p.pairs[b->p.npairs++] = q;
    return 0;
}

static int add_pairs(builder *b, const exact_thread_raw *t)
{
    const exact_raw *r = b->r;
    uint32_t index = t->index;
    prof_pair fold = { .count = t->small.count, .bytes = t->small.bytes, .wasteful_bytes = t->small.wasteful };
    for (size_t i = 0; i < r->npairs; i++) {
        const exact_pair_raw *q = &r->pairs[i];
        uint32_t c1, c2;
        if (q->thread != index)
            continue;
        if (q->bytes < b->fold_below) {
            fold.count += q->count;
            fold.bytes += q->bytes;
            fold.wasteful_bytes += q->wasteful;
            fold.approx_bytes += approx_bytes(r, q);
            continue;
        }
        if (leaf_context(b, q->c1, &c1) < 0 || leaf_context(b, q->c2, &c2) < 0 ||
            GROW(b->p.pairs, b->p.npairs, b->cap_pairs) < 0)
            return -1;
        b->p.pairs[b->p.npairs++] = (prof_pair){ c1, c2, q->count, q->bytes, q->wasteful,
                                                 approx_bytes(r, q) };
    }
    if (fold.count && add_fold(b, &fold, FOLD_NAME) < 0)
        return -1;
    prof_pair unnamed = { .count = t->unnamed.count, .bytes = t->unnamed.bytes,
                          .wasteful_bytes = t->unnamed.wasteful };
    return unnamed.count ? add_fold(b, &unnamed, UNNAMED_NAME) : 0;
}

static int by_start(const void *x, const void *y, void *arg)
{
    const prof_code *codes = arg;
    uint64_t a = codes[*(const uint32_t *)x].start, c = codes[*(const uint32_t *)y].start;
    return (a > c) - (a < c);
}

/* The index in p.codes of the code holding pc, or -1; order sorts them by start. */
static long code_holding(const profile *p, const uint32_t *order, uint64_t pc)
{
    size_t lo = 0, hi = p->ncodes;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->codes[order[mid]].start <= pc) lo = mid + 1;
        else hi = mid;
    }
    return lo && pc - p->codes[order[lo - 1]].start < p->codes[order[lo - 1]].size ? (long)order[lo - 1] : -1;
}

/* Leaves out every code that holds the pc of a leaf of this profile that
 * did not run in it (a stub or newer code now at an address the kept code
 * had): a report would show that leaf inside the wrong code. */
static int drop_foreign_codes(builder *b)
{
    uint32_t *order = malloc((b->p.ncodes ? b->p.ncodes : 1) * sizeof(*order));
    uint8_t *drop = calloc(b->p.ncodes ? b->p.ncodes : 1, 1);
    if (!order || !drop) {
        free(order);
        free(drop);
        return -1;
    }
    for (uint32_t i = 0; i < b->p.ncodes; i++)
        order[i] = i;
    qsort_r(order, b->p.ncodes, sizeof(*order), by_start, b->p.codes);
    for (size_t leaf = 1; leaf < b->r->nleaves; leaf++) {
        long k = b->leaf_ctx[leaf] ? code_holding(&b->p, order, b->r->leaves[leaf].sym.pc) : -1;
        if (k >= 0 && b->code_raw[k] != b->r->leaves[leaf].code)
            drop[k] = 1;
    }
    size_t kept = 0;
    for (size_t i = 0; i < b->p.ncodes; i++) {
        if (drop[i])
            prof_code_clear(&b->p.codes[i]);
        else
            b->p.codes[kept++] = b->p.codes[i];
    }
    b->p.ncodes = kept;
    free(order);
    free(drop);
    return 0;
}

static int build_thread(builder *b, const exact_thread_raw *t, double fp_tolerance)
{
    const exact_raw *r = b->r;
    memcpy(b->p.mode, r->mode, sizeof(b->p.mode));
    memcpy(b->p.sampler, "exact", sizeof("exact"));
    b->p.pid = r->pid;
    b->p.tid = t->os_tid;
    b->p.thread_name = strdup("");
    b->p.command = strdup(r->command);
    b->p.fp_tolerance = fp_tolerance;
    b->node_frame = calloc(r->nnodes + 1, sizeof(uint32_t));
    b->leaf_ctx = calloc(r->nleaves + 1, sizeof(uint32_t));
    b->code_seen = calloc(r->ncodes + 1, 1);
    if (!b->p.thread_name || !b->p.command || !b->node_frame || !b->leaf_ctx || !b->code_seen)
        return -1;
    return add_stats(b, t) < 0 || add_pairs(b, t) < 0 ? -1 : drop_foreign_codes(b);
}

static int write_thread(const exact_raw *r, const exact_thread_raw *t, const char *dir, unsigned n,
                        uint64_t fold_below, char *err, size_t errlen)
{
    builder b = { .r = r, .fold_below = fold_below };
    char path[4096];
    int rc = -1;
    if (build_thread(&b, t, r->fp_tolerance) < 0)
        snprintf(err, errlen, "out of memory converting the exact profile of thread %" PRId64, t->os_tid);
    else if ((size_t)snprintf(path, sizeof(path), "%s/%" PRId64 "/%" PRId64 "-%u.wasp", dir, r->pid,
                              t->os_tid, n) >= sizeof(path))
        snprintf(err, errlen, "%s: path too long", dir);
    else
        rc = profile_write(&b.p, path, err, errlen);
    free(b.node_frame);
    free(b.leaf_ctx);
    free(b.code_seen);
    free(b.code_raw);
    profile_free(&b.p);
    return rc;
}

int exact_convert_text(char *buf, const char *dir, unsigned n, exact_summary *s, char *err, size_t errlen)
{
    exact_raw r;
    char pdir[4096];
    if (exact_raw_parse(buf, &r, err, errlen) < 0)
        return -1;
    int rc = 0;
    snprintf(pdir, sizeof(pdir), "%s/%" PRId64, dir, r.pid);
    if (mkdir(pdir, PUBLISH_DIR_MODE) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "%s: %s", pdir, strerror(errno));
        rc = -1;
    }
    uint64_t total = 0;
    for (size_t i = 0; i < r.npairs; i++)
        total += r.pairs[i].bytes;
    for (size_t i = 0; i < r.nthreads; i++)
        total += r.threads[i].small.bytes + r.threads[i].unnamed.bytes;
    for (size_t i = 0; rc == 0 && i < r.nthreads; i++) {
        rc = write_thread(&r, &r.threads[i], dir, n, (uint64_t)((double)total * FOLD_SHARE), err, errlen);
        s->profiles += rc == 0;
    }
    if (r.cut) {
        s->cut = 1;
        s->instructions = r.instructions;
    }
    exact_raw_free(&r);
    return rc;
}

static char *read_all(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    char *buf = NULL;
    size_t len = 0;
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    FILE *m = open_memstream(&buf, &len);
    char chunk[65536];
    size_t got;
    while (m && (got = fread(chunk, 1, sizeof(chunk), f)) > 0)
        fwrite(chunk, 1, got, m);
    int bad = !m || ferror(f);
    fclose(f);
    if (m && fclose(m) != 0)
        bad = 1;
    if (bad) {
        snprintf(err, errlen, "%s: cannot read", path);
        free(buf);
        return NULL;
    }
    return buf;
}

static int is_raw(const char *name)
{
    size_t l = strlen(name);
    return l > 4 && !strcmp(name + l - 4, ".raw");
}

int exact_convert_dir(const char *dir, exact_summary *s, char *err, size_t errlen)
{
    char raw_dir[4096], path[4400];
    memset(s, 0, sizeof(*s));
    snprintf(raw_dir, sizeof(raw_dir), "%s/.exact", dir);
    DIR *d = opendir(raw_dir);
    if (!d)
        return 0;
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        unsigned pid, n;
        if (!is_raw(e->d_name) || sscanf(e->d_name, "%u-%u.raw", &pid, &n) != 2)
            continue;
        snprintf(path, sizeof(path), "%s/%s", raw_dir, e->d_name);
        char *buf = read_all(path, err, errlen);
        /* An empty file: reserved by a process that died before writing. */
        rc = !buf ? -1 : !buf[0] ? 0 : exact_convert_text(buf, dir, n, s, err, errlen);
        free(buf);
        if (rc == 0)
            unlink(path);
    }
    closedir(d);
    if (rc == 0)
        rmdir(raw_dir);
    return rc;
}

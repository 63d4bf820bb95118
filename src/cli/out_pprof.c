/*
 * out_pprof.c - writes the report model (merge.h) as a gzip'd pprof profile.
 *
 * Owns the mapping of wasp's pairs onto pprof's samples. pprof knows one
 * stack per sample, a pair has two contexts, so a pair's stack reads, leaf
 * first: the trap context C2, one synthetic frame naming the relation
 * ("rewritten silently by"), then the watch context C1. A flame graph thus
 * grows from C1's root through C1's leaf into C2, and pprof's flat column
 * charges C2's leaf. Values are precisely wasteful and monitored bytes;
 * approximately wasteful bytes, traps, the mode and both leaf instructions
 * (pprof has no place for an instruction's text) are labels; the program
 * fractions (Eq. 1) are comments.
 *
 * pprof wants each string, function, mapping and location once, by index
 * or id. They are interned by sorting and deduplicating (qsort, bsearch),
 * which also makes the output the same for the same model. protobuf-c
 * encodes (build/gen/profile.pb-c.h, from src/res/profile.proto) and
 * pb_gzip.c compresses.
 */
#include "out_pprof.h"

#include "json_escape.h"
#include "pb_gzip.h"
#include "profile.pb-c.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef Perftools__Profiles__Profile pprof_profile;
typedef Perftools__Profiles__ValueType pprof_value_type;
typedef Perftools__Profiles__Sample pprof_sample;
typedef Perftools__Profiles__Label pprof_label;
typedef Perftools__Profiles__Mapping pprof_mapping;
typedef Perftools__Profiles__Location pprof_location;
typedef Perftools__Profiles__Line pprof_line;
typedef Perftools__Profiles__Function pprof_function;

#define PPROF_NLABELS 5        /* per sample: see pprof_labels */
#define PPROF_MAX_COMMENTS 6

/* Strings every profile uses besides the model's; d->fixed[] holds their
 * indices in the string table. */
enum { S_EMPTY, S_WASTEFUL, S_MONITORED, S_BYTES, S_MODE, S_APPROX, S_TRAPS, S_WATCH_INSN,
       S_TRAP_INSN, S_NO_NAME, S_NFIXED };
static const char *const pprof_fixed_strings[S_NFIXED] = {
    "", PPROF_WASTEFUL, PPROF_MONITORED, "bytes", "mode", "approx_bytes", "traps",
    "watch_instruction", "trap_instruction",
    "?",    /* a frame without a symbol, as the collapsed stacks say */
};

/* A function is a name in a file. pprof wants its first line; the profile
 * knows only the lines that were executing, so the smallest one stands in. */
typedef struct pprof_fkey {
    int64_t name, file, line;
} pprof_fkey;

typedef struct pprof_lkey {
    uint64_t function, mapping;
    int64_t line;
} pprof_lkey;

/* The interned tables, and what every context's frames became. */
typedef struct pprof_doc {
    const merge_model *m;
    const char *relation;
    int64_t fixed[S_NFIXED], mode, relation_str;
    size_t nframes;                     /* over all contexts, in context order */
    const char **strs;  size_t nstrs;   /* sorted, unique: strs[0] is "" */
    char **fixed_utf8;  size_t nfixed_utf8;     /* copies made valid UTF-8 */
    pprof_fkey *funcs;  size_t nfuncs;  /* by name, file; id = index + 1 */
    int64_t *maps;      size_t nmaps;   /* module strings; id = index + 1 */
    pprof_lkey *locs;   size_t nlocs;   /* id = index + 1 */
    pprof_fkey *frame_funcs;            /* per frame, while the tables are built */
    pprof_lkey *frame_locs;
    uint64_t *ctx_locs;     /* context i's frames: ctx_locs[ctx_at[i]...], leaf first */
    size_t *ctx_at;
    int64_t *ctx_insn;      /* context i's leaf instruction (string index) */
    uint64_t relation_loc;
    char *comments[PPROF_MAX_COMMENTS];
    size_t ncomments;
} pprof_doc;

/* ---- interning: sort, drop repeats, look up by bsearch ---- */

static int pprof_str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int pprof_i64_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int pprof_fkey_same(const void *va, const void *vb)
{
    const pprof_fkey *a = va, *b = vb;
    if (a->name != b->name) return (a->name > b->name) - (a->name < b->name);
    return (a->file > b->file) - (a->file < b->file);
}

/* Within a function, known lines before 0 (unknown), smallest first, so
 * the first of each run holds the start line. */
static int pprof_fkey_cmp(const void *va, const void *vb)
{
    const pprof_fkey *a = va, *b = vb;
    int c = pprof_fkey_same(a, b);
    if (c) return c;
    uint64_t x = (uint64_t)a->line - 1, y = (uint64_t)b->line - 1;
    return (x > y) - (x < y);
}

static int pprof_lkey_cmp(const void *va, const void *vb)
{
    const pprof_lkey *a = va, *b = vb;
    if (a->function != b->function) return a->function > b->function ? 1 : -1;
    if (a->mapping != b->mapping) return a->mapping > b->mapping ? 1 : -1;
    return (a->line > b->line) - (a->line < b->line);
}

/* Sorts by cmp and keeps the first of each run that same calls equal;
 * returns how many are left. */
static size_t pprof_unique(void *base, size_t n, size_t size,
                           int (*cmp)(const void *, const void *),
                           int (*same)(const void *, const void *))
{
    char *a = base;
    size_t out = 0;
    if (n == 0) return 0;
    qsort(a, n, size, cmp);
    for (size_t i = 1; i < n; i++) {
        if (same(a + out * size, a + i * size) == 0) continue;
        if (++out != i) memcpy(a + out * size, a + i * size, size);
    }
    return out + 1;
}

static int64_t pprof_str_find(const pprof_doc *d, const char *s)
{
    const char **at = bsearch(&s, d->strs, d->nstrs, sizeof *d->strs, pprof_str_cmp);
    return at ? (int64_t)(at - d->strs) : 0;
}

/* Index of s in the string table; every string was collected first. proto3
 * strings must be UTF-8, and readers built on Go's protobuf packages
 * (Pyroscope, Parca) refuse a profile whose strings are not, while symbol
 * names may hold any bytes: those are looked up as the JSON shows them. */
static int64_t pprof_str(const pprof_doc *d, const char *s)
{
    if (json_utf8_valid(s)) return pprof_str_find(d, s);
    char *fixed = json_utf8_dup(s);
    int64_t i = fixed ? pprof_str_find(d, fixed) : 0;
    free(fixed);
    return i;
}

/* Replaces the collected strings that are not UTF-8 by fixed copies. */
static int pprof_fix_strings(pprof_doc *d, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (json_utf8_valid(d->strs[i])) continue;
        if (!d->fixed_utf8 && !(d->fixed_utf8 = malloc(n * sizeof *d->fixed_utf8))) return -1;
        char *fixed = json_utf8_dup(d->strs[i]);
        if (!fixed) return -1;
        d->strs[i] = d->fixed_utf8[d->nfixed_utf8++] = fixed;
    }
    return 0;
}

static uint64_t pprof_function_id(const pprof_doc *d, pprof_fkey k)
{
    const pprof_fkey *at = bsearch(&k, d->funcs, d->nfuncs, sizeof *d->funcs, pprof_fkey_same);
    return at ? (uint64_t)(at - d->funcs) + 1 : 0;
}

static uint64_t pprof_mapping_id(const pprof_doc *d, int64_t module)
{
    const int64_t *at = module ? bsearch(&module, d->maps, d->nmaps, sizeof *d->maps,
                                         pprof_i64_cmp) : NULL;
    return at ? (uint64_t)(at - d->maps) + 1 : 0;
}

static uint64_t pprof_location_id(const pprof_doc *d, pprof_lkey k)
{
    const pprof_lkey *at = bsearch(&k, d->locs, d->nlocs, sizeof *d->locs, pprof_lkey_cmp);
    return at ? (uint64_t)(at - d->locs) + 1 : 0;
}

/* ---- building the tables ---- */

static const char *pprof_name(const merge_frame *fr)
{
    return fr->function[0] ? fr->function : pprof_fixed_strings[S_NO_NAME];
}

static int pprof_collect_strings(pprof_doc *d)
{
    const merge_model *m = d->m;
    size_t n = 0, cap = S_NFIXED + 2 + d->ncomments + m->ncontexts + 3 * d->nframes;
    if (!(d->strs = malloc(cap * sizeof *d->strs))) return -1;
    for (size_t i = 0; i < S_NFIXED; i++) d->strs[n++] = pprof_fixed_strings[i];
    d->strs[n++] = m->mode;
    d->strs[n++] = d->relation;
    for (size_t i = 0; i < d->ncomments; i++) d->strs[n++] = d->comments[i];
    for (size_t i = 0; i < m->ncontexts; i++) {
        const merge_ctx *c = m->contexts[i];
        d->strs[n++] = c->instruction;
        for (size_t k = 0; k < c->nframes; k++) {
            d->strs[n++] = pprof_name(&c->frames[k]);
            d->strs[n++] = c->frames[k].file;
            d->strs[n++] = c->frames[k].module;
        }
    }
    if (pprof_fix_strings(d, n) != 0) return -1;
    /* "" sorts first, where pprof wants it. */
    d->nstrs = pprof_unique(d->strs, n, sizeof *d->strs, pprof_str_cmp, pprof_str_cmp);
    for (size_t i = 0; i < S_NFIXED; i++) d->fixed[i] = pprof_str(d, pprof_fixed_strings[i]);
    d->mode = pprof_str(d, m->mode);
    d->relation_str = pprof_str(d, d->relation);
    return 0;
}

/* Each frame's function key, and every function once (the relation's too),
 * and every module once. */
static int pprof_collect_functions(pprof_doc *d)
{
    size_t f = 0, n = 0;
    d->frame_funcs = malloc((d->nframes + 1) * sizeof *d->frame_funcs);
    d->funcs = malloc((d->nframes + 1) * sizeof *d->funcs);
    d->maps = malloc((d->nframes + 1) * sizeof *d->maps);
    if (!d->frame_funcs || !d->funcs || !d->maps) return -1;
    for (size_t i = 0; i < d->m->ncontexts; i++) {
        const merge_ctx *c = d->m->contexts[i];
        for (size_t k = 0; k < c->nframes; k++, f++) {
            const merge_frame *fr = &c->frames[k];
            d->frame_funcs[f] = (pprof_fkey){ pprof_str(d, pprof_name(fr)),
                                              pprof_str(d, fr->file), fr->line };
            if (fr->module[0]) d->maps[n++] = pprof_str(d, fr->module);
        }
    }
    d->nmaps = pprof_unique(d->maps, n, sizeof *d->maps, pprof_i64_cmp, pprof_i64_cmp);
    memcpy(d->funcs, d->frame_funcs, d->nframes * sizeof *d->funcs);
    d->funcs[d->nframes] = (pprof_fkey){ d->relation_str, d->fixed[S_EMPTY], 0 };
    d->nfuncs = pprof_unique(d->funcs, d->nframes + 1, sizeof *d->funcs, pprof_fkey_cmp,
                             pprof_fkey_same);
    return 0;
}

/* The relation's frame: no file, no line, no module. */
static pprof_lkey pprof_relation_lkey(const pprof_doc *d)
{
    pprof_fkey rel = { d->relation_str, d->fixed[S_EMPTY], 0 };
    return (pprof_lkey){ pprof_function_id(d, rel), 0, 0 };
}

/* Each frame's location key, and every location once: frames of one
 * function, line and module are one location whatever context holds them,
 * so pprof's -raw and -traces list each place once. */
static int pprof_collect_locations(pprof_doc *d)
{
    size_t f = 0;
    d->frame_locs = malloc((d->nframes + 1) * sizeof *d->frame_locs);
    d->locs = malloc((d->nframes + 1) * sizeof *d->locs);
    if (!d->frame_locs || !d->locs) return -1;
    for (size_t i = 0; i < d->m->ncontexts; i++) {
        const merge_ctx *c = d->m->contexts[i];
        for (size_t k = 0; k < c->nframes; k++, f++) {
            const char *module = c->frames[k].module;
            d->frame_locs[f] = (pprof_lkey){ pprof_function_id(d, d->frame_funcs[f]),
                                             pprof_mapping_id(d, pprof_str(d, module)),
                                             c->frames[k].line };
        }
    }
    memcpy(d->locs, d->frame_locs, d->nframes * sizeof *d->locs);
    d->locs[d->nframes] = pprof_relation_lkey(d);
    d->nlocs = pprof_unique(d->locs, d->nframes + 1, sizeof *d->locs, pprof_lkey_cmp,
                            pprof_lkey_cmp);
    return 0;
}

/* Every context's location ids and instruction, looked up once however many
 * pairs use it. */
static int pprof_resolve_contexts(pprof_doc *d)
{
    const merge_model *m = d->m;
    d->ctx_locs = malloc((d->nframes ? d->nframes : 1) * sizeof *d->ctx_locs);
    d->ctx_at = malloc((m->ncontexts ? m->ncontexts : 1) * sizeof *d->ctx_at);
    d->ctx_insn = malloc((m->ncontexts ? m->ncontexts : 1) * sizeof *d->ctx_insn);
    if (!d->ctx_locs || !d->ctx_at || !d->ctx_insn) return -1;
    size_t at = 0;
    for (size_t i = 0; i < m->ncontexts; i++) {
        d->ctx_at[i] = at;
        d->ctx_insn[i] = pprof_str(d, m->contexts[i]->instruction);
        for (size_t k = 0; k < m->contexts[i]->nframes; k++, at++)
            d->ctx_locs[at] = pprof_location_id(d, d->frame_locs[at]);
    }
    d->relation_loc = pprof_location_id(d, pprof_relation_lkey(d));
    return 0;
}

/* ---- comments: what the text report's header says first ---- */

static int pprof_comment(pprof_doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int pprof_comment(pprof_doc *d, const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0 || d->ncomments == PPROF_MAX_COMMENTS) {
        if (n >= 0) free(s);
        return -1;
    }
    d->comments[d->ncomments++] = s;
    return 0;
}

static int pprof_comments(pprof_doc *d)
{
    const merge_model *m = d->m;
    int dead = !strcmp(m->mode, "dead-store");
    char interval[64], why[512];
    if (m->interval_mixed) snprintf(interval, sizeof interval, "interval varies by thread");
    else snprintf(interval, sizeof interval, "every %" PRIu64 " %s", m->interval,
                  merge_sampler_timed(m) ? "ns" : "events");
    int rc = pprof_comment(d, "wasp %s: %zu thread%s in %zu process%s, sampler %s, %s", m->mode,
                           m->nthreads, m->nthreads == 1 ? "" : "s", m->nprocesses,
                           m->nprocesses == 1 ? "" : "es", m->sampler, interval);
    if (dead)
        rc |= pprof_comment(d, "program (Eq. 1): %.2f%% dead of %" PRIu64 " bytes monitored",
                            100.0 * m->fraction, m->bytes);
    else
        rc |= pprof_comment(d, "program (Eq. 1): %.2f%% precisely silent, %.2f%% approximately "
                            "silent (tolerance %g) of %" PRIu64 " bytes monitored",
                            100.0 * m->fraction, 100.0 * m->approx_fraction, m->fp_tolerance,
                            m->bytes);
    rc |= pprof_comment(d, "sampling error: %.1f%% to %.1f%% (95%%, %" PRIu64 " pairs counted)",
                        100.0 * m->fraction_lo, 100.0 * m->fraction_hi, m->count);
    rc |= pprof_comment(d, "stacks, leaf first: trap context, \"%s\", watch context",
                        d->relation);
    if (merge_watch_warning(m, why, sizeof why)) rc |= pprof_comment(d, "warning: %s", why);
    return rc;
}

static void pprof_doc_free(pprof_doc *d)
{
    free(d->strs);
    free(d->funcs);
    free(d->maps);
    free(d->locs);
    free(d->frame_funcs);
    free(d->frame_locs);
    free(d->ctx_locs);
    free(d->ctx_at);
    free(d->ctx_insn);
    for (size_t i = 0; i < d->ncomments; i++) free(d->comments[i]);
    for (size_t i = 0; i < d->nfixed_utf8; i++) free(d->fixed_utf8[i]);
    free(d->fixed_utf8);
}

static int pprof_doc_build(pprof_doc *d, const merge_model *m)
{
    memset(d, 0, sizeof *d);
    d->m = m;
    d->relation = merge_relation(m->mode);
    for (size_t i = 0; i < m->ncontexts; i++) d->nframes += m->contexts[i]->nframes;
    if (pprof_comments(d) != 0 || pprof_collect_strings(d) != 0 ||
        pprof_collect_functions(d) != 0 || pprof_collect_locations(d) != 0 ||
        pprof_resolve_contexts(d) != 0) {
        pprof_doc_free(d);
        return -1;
    }
    return 0;
}

/* ---- the protobuf-c message: arrays of structs, and the pointer arrays
 * protobuf-c wants over them ---- */

typedef struct pprof_msg {
    pprof_profile profile;
    pprof_value_type types[2];
    pprof_value_type *type_ptrs[2];
    pprof_function *funcs;      pprof_function **func_ptrs;
    pprof_mapping *maps;        pprof_mapping **map_ptrs;
    pprof_location *locs;       pprof_location **loc_ptrs;
    pprof_line *lines;          pprof_line **line_ptrs;
    pprof_sample *samples;      pprof_sample **sample_ptrs;
    pprof_label *labels;        pprof_label **label_ptrs;
    uint64_t *stacks;           /* every sample's location ids, one after another */
    int64_t *values;
    int64_t comments[PPROF_MAX_COMMENTS];
} pprof_msg;

static void pprof_msg_free(pprof_msg *g)
{
    free(g->funcs);   free(g->func_ptrs);
    free(g->maps);    free(g->map_ptrs);
    free(g->locs);    free(g->loc_ptrs);
    free(g->lines);   free(g->line_ptrs);
    free(g->samples); free(g->sample_ptrs);
    free(g->labels);  free(g->label_ptrs);
    free(g->stacks);
    free(g->values);
}

/* calloc that never asks for zero bytes, so NULL always means no memory. */
static void *pprof_calloc(size_t n, size_t size)
{
    return calloc(n ? n : 1, size);
}

static int pprof_msg_alloc(pprof_msg *g, const pprof_doc *d, size_t nstack)
{
    size_t npairs = d->m->npairs;
    g->funcs = pprof_calloc(d->nfuncs, sizeof *g->funcs);
    g->func_ptrs = pprof_calloc(d->nfuncs, sizeof *g->func_ptrs);
    g->maps = pprof_calloc(d->nmaps, sizeof *g->maps);
    g->map_ptrs = pprof_calloc(d->nmaps, sizeof *g->map_ptrs);
    g->locs = pprof_calloc(d->nlocs, sizeof *g->locs);
    g->loc_ptrs = pprof_calloc(d->nlocs, sizeof *g->loc_ptrs);
    g->lines = pprof_calloc(d->nlocs, sizeof *g->lines);
    g->line_ptrs = pprof_calloc(d->nlocs, sizeof *g->line_ptrs);
    g->samples = pprof_calloc(npairs, sizeof *g->samples);
    g->sample_ptrs = pprof_calloc(npairs, sizeof *g->sample_ptrs);
    g->labels = pprof_calloc(npairs * PPROF_NLABELS, sizeof *g->labels);
    g->label_ptrs = pprof_calloc(npairs * PPROF_NLABELS, sizeof *g->label_ptrs);
    g->stacks = pprof_calloc(nstack, sizeof *g->stacks);
    g->values = pprof_calloc(2 * npairs, sizeof *g->values);
    return g->funcs && g->func_ptrs && g->maps && g->map_ptrs && g->locs && g->loc_ptrs &&
           g->lines && g->line_ptrs && g->samples && g->sample_ptrs && g->labels &&
           g->label_ptrs && g->stacks && g->values ? 0 : -1;
}

static void pprof_msg_functions(pprof_msg *g, const pprof_doc *d)
{
    for (size_t i = 0; i < d->nfuncs; i++) {
        pprof_function f = PERFTOOLS__PROFILES__FUNCTION__INIT;
        f.id = i + 1;
        f.name = f.system_name = d->funcs[i].name;
        f.filename = d->funcs[i].file;
        f.start_line = d->funcs[i].line;
        g->funcs[i] = f;
        g->func_ptrs[i] = &g->funcs[i];
    }
}

/* Frames are symbolized already: the has_* flags stop pprof from trying
 * again (there are no addresses to symbolize from). */
static void pprof_msg_mappings(pprof_msg *g, const pprof_doc *d)
{
    for (size_t i = 0; i < d->nmaps; i++) {
        pprof_mapping p = PERFTOOLS__PROFILES__MAPPING__INIT;
        p.id = i + 1;
        p.filename = d->maps[i];
        p.has_functions = p.has_filenames = p.has_line_numbers = 1;
        g->maps[i] = p;
        g->map_ptrs[i] = &g->maps[i];
    }
}

static void pprof_msg_locations(pprof_msg *g, const pprof_doc *d)
{
    for (size_t i = 0; i < d->nlocs; i++) {
        pprof_line l = PERFTOOLS__PROFILES__LINE__INIT;
        pprof_location c = PERFTOOLS__PROFILES__LOCATION__INIT;
        l.function_id = d->locs[i].function;
        l.line = d->locs[i].line;
        g->lines[i] = l;
        g->line_ptrs[i] = &g->lines[i];
        c.id = i + 1;
        c.mapping_id = d->locs[i].mapping;
        c.n_line = 1;
        c.line = &g->line_ptrs[i];
        g->locs[i] = c;
        g->loc_ptrs[i] = &g->locs[i];
    }
}

static int64_t pprof_i64(uint64_t v)
{
    return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

static pprof_label pprof_label_str(int64_t key, int64_t str)
{
    pprof_label l = PERFTOOLS__PROFILES__LABEL__INIT;
    l.key = key;
    l.str = str;
    return l;
}

static pprof_label pprof_label_num(int64_t key, uint64_t num, int64_t unit)
{
    pprof_label l = PERFTOOLS__PROFILES__LABEL__INIT;
    l.key = key;
    l.num = pprof_i64(num);
    l.num_unit = unit;
    return l;
}

/* What a pair says beyond its stack: labels filter (pprof -tagfocus) and
 * show in -raw and -traces. */
static void pprof_labels(pprof_label *out, const pprof_doc *d, const merge_pair *q)
{
    out[0] = pprof_label_str(d->fixed[S_MODE], d->mode);
    out[1] = pprof_label_num(d->fixed[S_APPROX], q->approx_bytes, d->fixed[S_BYTES]);
    out[2] = pprof_label_num(d->fixed[S_TRAPS], q->count, 0);
    out[3] = pprof_label_str(d->fixed[S_WATCH_INSN], d->ctx_insn[q->watch_id]);
    out[4] = pprof_label_str(d->fixed[S_TRAP_INSN], d->ctx_insn[q->trap_id]);
}

/* Copies context ctx's location ids to out; returns the next free slot. */
static uint64_t *pprof_put_ctx(uint64_t *out, const pprof_doc *d, size_t ctx)
{
    size_t n = d->m->contexts[ctx]->nframes;
    memcpy(out, d->ctx_locs + d->ctx_at[ctx], n * sizeof *out);
    return out + n;
}

static void pprof_msg_samples(pprof_msg *g, const pprof_doc *d)
{
    uint64_t *at = g->stacks;
    for (size_t i = 0; i < d->m->npairs; i++) {
        const merge_pair *q = &d->m->pairs[i];
        pprof_sample s = PERFTOOLS__PROFILES__SAMPLE__INIT;
        s.location_id = at;
        at = pprof_put_ctx(at, d, q->trap_id);
        *at++ = d->relation_loc;
        at = pprof_put_ctx(at, d, q->watch_id);
        s.n_location_id = (size_t)(at - s.location_id);
        s.value = &g->values[2 * i];
        s.value[0] = pprof_i64(q->wasteful_bytes);
        s.value[1] = pprof_i64(q->bytes);
        s.n_value = 2;
        pprof_labels(&g->labels[PPROF_NLABELS * i], d, q);
        for (size_t k = 0; k < PPROF_NLABELS; k++)
            g->label_ptrs[PPROF_NLABELS * i + k] = &g->labels[PPROF_NLABELS * i + k];
        s.label = &g->label_ptrs[PPROF_NLABELS * i];
        s.n_label = PPROF_NLABELS;
        g->samples[i] = s;
        g->sample_ptrs[i] = &g->samples[i];
    }
}

static void pprof_msg_profile(pprof_msg *g, const pprof_doc *d, int64_t time_ns)
{
    pprof_profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
    for (int i = 0; i < 2; i++) {
        pprof_value_type t = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
        t.type = d->fixed[i == 0 ? S_WASTEFUL : S_MONITORED];
        t.unit = d->fixed[S_BYTES];
        g->types[i] = t;
        g->type_ptrs[i] = &g->types[i];
    }
    for (size_t i = 0; i < d->ncomments; i++) g->comments[i] = pprof_str(d, d->comments[i]);
    p.n_sample_type = 2;            p.sample_type = g->type_ptrs;
    p.n_sample = d->m->npairs;      p.sample = g->sample_ptrs;
    p.n_mapping = d->nmaps;         p.mapping = g->map_ptrs;
    p.n_location = d->nlocs;        p.location = g->loc_ptrs;
    p.n_function = d->nfuncs;       p.function = g->func_ptrs;
    p.n_string_table = d->nstrs;    p.string_table = (char **)d->strs;
    p.n_comment = d->ncomments;     p.comment = g->comments;
    p.time_nanos = time_ns;
    /* Without it pprof would show the last sample type, monitored bytes. */
    p.default_sample_type = d->fixed[S_WASTEFUL];
    g->profile = p;
}

static int pprof_msg_build(pprof_msg *g, const pprof_doc *d, int64_t time_ns)
{
    size_t nstack = 0;
    memset(g, 0, sizeof *g);
    for (size_t i = 0; i < d->m->npairs; i++)
        nstack += d->m->pairs[i].watch->nframes + 1 + d->m->pairs[i].trap->nframes;
    if (pprof_msg_alloc(g, d, nstack) != 0) return -1;
    pprof_msg_functions(g, d);
    pprof_msg_mappings(g, d);
    pprof_msg_locations(g, d);
    pprof_msg_samples(g, d);
    pprof_msg_profile(g, d, time_ns);
    return 0;
}

int pprof_write_report(FILE *f, const merge_model *m, int64_t time_ns)
{
    pprof_doc d;
    pprof_msg g;
    if (pprof_doc_build(&d, m) != 0) return -1;
    int rc = pprof_msg_build(&g, &d, time_ns);
    if (rc == 0) rc = pb_gzip_write(f, &g.profile.base);
    pprof_msg_free(&g);
    pprof_doc_free(&d);
    return rc == 0 && !ferror(f) ? 0 : -1;
}

/*
 * out_html.c - writes the report model (merge.h) as one HTML page.
 *
 * Owns the data the page shows and its safety. The page is the template
 * src/res/report.html, compiled in as a byte array (build/gen/report_html.h),
 * with one JSON document put in place of its @WASP_DATA@ marker inside a
 * <script type="application/json">; the template's script builds the DOM
 * from it with textContent only. Names never reach the page as markup: every
 * string goes through json_escape_str (json_escape.c), which turns '<' into \u003c, so no
 * symbol name can end the script element or open a tag.
 *
 * The JSON interns strings and frames (a frame is function, file and line,
 * as merge.c identifies them), lists only the contexts the embedded pairs
 * use, and carries two icicle trees (by watch and by trap context, built
 * from every pair) with their narrowest nodes folded into their parents, so
 * the file stays small and quick to open whatever the size of the run.
 * The disassembly of JIT code the contexts lie in is out_html_code.c's.
 */
#include "out_html.h"

#include "json_escape.h"
#include "out_html_code.h"
#include "out_json.h"

#include "report_html.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define HTML_MARKER "@WASP_DATA@"
#define HTML_NONE UINT32_MAX
#define HTML_INSN 0x80000000u           /* node code: instruction string, not a frame */
#define HTML_FLAME_MAX_NODES 8000       /* per tree: a few thousand boxes draw instantly */
#define HTML_FLAME_MIN_SHARE 1e-4       /* narrower than 0.01% of the width: folded */
#define HTML_FLAME_MAX_DEPTH 1024       /* leaf-most frames kept; bounds recursion here and in JS */

/* Open addressing from a hash to an id; equality is the caller's. */
typedef struct html_map {
    uint64_t *hash;
    uint32_t *id;       /* HTML_NONE when empty */
    size_t cap, n;
} html_map;

typedef struct html_frame {
    uint32_t function, file, line, module;  /* string ids, and the line */
} html_frame;

typedef struct html_node {
    uint32_t code;      /* frame id, or HTML_INSN | instruction string id */
    uint32_t parent, first, next;
    uint64_t wasteful, approx;
} html_node;

typedef struct html_tree {
    html_node *v;
    size_t n, cap;
    html_map map;       /* (parent, code) -> node */
    uint64_t threshold; /* nodes lighter than this are folded */
    size_t hidden;
} html_tree;

typedef struct html_doc {
    const merge_model *m;
    const char **strs;  size_t nstrs, cap_strs;   html_map str_map;
    html_frame *frames; size_t nframes, cap_frames; html_map frame_map;
    uint32_t *ctx_frames;   /* frame ids of every context, leaf first, back to back */
    size_t *ctx_first;      /* where context i starts in ctx_frames */
    uint32_t *ctx_insn;     /* string id of every context's leaf instruction */
    uint32_t *ctx_out;      /* model context -> embedded index, HTML_NONE if not embedded */
    size_t *embedded;       /* embedded index -> model context */
    size_t nembedded;
    /* Only what the page uses is written: interned ids -> output ids. */
    uint32_t *frame_out, *used_frames; size_t nused_frames;
    uint32_t *str_out, *used_strs;     size_t nused_strs;
    html_tree tree[2];      /* by watch, by trap */
    html_code *code;        /* disassembly of the embedded contexts' code */
    int oom;
} html_doc;

/* ---- interning ---- */

static uint64_t html_hash(uint64_t h, const void *data, size_t len)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < len; i++) h = (h ^ b[i]) * 1099511628211ull;    /* FNV-1a */
    return h;
}

#define HTML_FNV 1469598103934665603ull

static int html_grow(void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap) return 0;
    size_t ncap = *cap ? *cap * 2 : 64;
    void *a = realloc(*arr, ncap * elem);
    if (!a) return -1;
    *arr = a;
    *cap = ncap;
    return 0;
}

static int map_rehash(html_map *map)
{
    size_t ncap = map->cap ? map->cap * 2 : 256;
    uint64_t *hash = malloc(ncap * sizeof *hash);
    uint32_t *id = malloc(ncap * sizeof *id);
    if (!hash || !id) {
        free(hash);
        free(id);
        return -1;
    }
    for (size_t i = 0; i < ncap; i++) id[i] = HTML_NONE;
    for (size_t i = 0; i < map->cap; i++) {
        if (map->id[i] == HTML_NONE) continue;
        size_t j = map->hash[i] & (ncap - 1);
        while (id[j] != HTML_NONE) j = (j + 1) & (ncap - 1);
        hash[j] = map->hash[i];
        id[j] = map->id[i];
    }
    free(map->hash);
    free(map->id);
    map->hash = hash;
    map->id = id;
    map->cap = ncap;
    return 0;
}

/* Finds the slot for h whose id satisfies eq, or the empty slot where it
 * would go (growing the map first so that slot stays valid). */
static size_t map_slot(html_map *map, uint64_t h, int (*eq)(const html_doc *, uint32_t,
                       const void *), const html_doc *d, const void *key, int *oom)
{
    if ((map->n + 1) * 2 > map->cap && map_rehash(map) != 0) {
        *oom = 1;
        return 0;
    }
    size_t j = h & (map->cap - 1);
    while (map->id[j] != HTML_NONE && !(map->hash[j] == h && eq(d, map->id[j], key)))
        j = (j + 1) & (map->cap - 1);
    return j;
}

static int str_eq(const html_doc *d, uint32_t id, const void *key)
{
    return strcmp(d->strs[id], key) == 0;
}

static int frame_eq(const html_doc *d, uint32_t id, const void *key)
{
    const html_frame *a = &d->frames[id], *b = key;
    return a->function == b->function && a->file == b->file && a->line == b->line;
}

static uint32_t doc_str(html_doc *d, const char *s)
{
    uint64_t h = html_hash(HTML_FNV, s, strlen(s));
    size_t j = map_slot(&d->str_map, h, str_eq, d, s, &d->oom);
    if (d->oom) return 0;
    if (d->str_map.id[j] != HTML_NONE) return d->str_map.id[j];
    if (d->nstrs >= HTML_INSN ||
        html_grow((void **)&d->strs, &d->cap_strs, d->nstrs, sizeof *d->strs) != 0) {
        d->oom = 1;
        return 0;
    }
    d->strs[d->nstrs] = s;     /* the model outlives the document */
    d->str_map.hash[j] = h;
    d->str_map.id[j] = (uint32_t)d->nstrs;
    d->str_map.n++;
    return (uint32_t)d->nstrs++;
}

static uint32_t doc_frame(html_doc *d, const merge_frame *mf)
{
    html_frame fr = { doc_str(d, mf->function), doc_str(d, mf->file), mf->line, 0 };
    uint64_t h = html_hash(HTML_FNV, &fr, 3 * sizeof(uint32_t));
    size_t j = map_slot(&d->frame_map, h, frame_eq, d, &fr, &d->oom);
    if (d->oom) return 0;
    if (d->frame_map.id[j] != HTML_NONE) return d->frame_map.id[j];
    fr.module = doc_str(d, mf->module);
    if (d->oom || html_grow((void **)&d->frames, &d->cap_frames, d->nframes,
                            sizeof *d->frames) != 0) {
        d->oom = 1;
        return 0;
    }
    d->frames[d->nframes] = fr;
    d->frame_map.hash[j] = h;
    d->frame_map.id[j] = (uint32_t)d->nframes;
    d->frame_map.n++;
    return (uint32_t)d->nframes++;
}

/* Interns every frame of every context once; trees and pairs then work on
 * small integers. */
static int doc_contexts(html_doc *d)
{
    const merge_model *m = d->m;
    size_t total = 0;
    for (size_t i = 0; i < m->ncontexts; i++) total += m->contexts[i]->nframes;
    d->ctx_frames = malloc((total ? total : 1) * sizeof *d->ctx_frames);
    d->ctx_first = malloc((m->ncontexts + 1) * sizeof *d->ctx_first);
    d->ctx_insn = malloc((m->ncontexts ? m->ncontexts : 1) * sizeof *d->ctx_insn);
    d->ctx_out = malloc((m->ncontexts ? m->ncontexts : 1) * sizeof *d->ctx_out);
    d->embedded = malloc((m->ncontexts ? m->ncontexts : 1) * sizeof *d->embedded);
    if (!d->ctx_frames || !d->ctx_first || !d->ctx_insn || !d->ctx_out || !d->embedded)
        return -1;
    size_t at = 0;
    for (size_t i = 0; i < m->ncontexts && !d->oom; i++) {
        const merge_ctx *c = m->contexts[i];
        d->ctx_first[i] = at;
        d->ctx_out[i] = HTML_NONE;
        d->ctx_insn[i] = doc_str(d, c->instruction);
        for (size_t k = 0; k < c->nframes; k++) d->ctx_frames[at++] = doc_frame(d, &c->frames[k]);
    }
    d->ctx_first[m->ncontexts] = at;
    return d->oom ? -1 : 0;
}

/* Output ids, given in order of first use; tables are written after every
 * use is known. */
static uint32_t use_str(html_doc *d, uint32_t s)
{
    if (d->str_out[s] == HTML_NONE) {
        d->str_out[s] = (uint32_t)d->nused_strs;
        d->used_strs[d->nused_strs++] = s;
    }
    return d->str_out[s];
}

static uint32_t use_frame(html_doc *d, uint32_t fi)
{
    if (d->frame_out[fi] == HTML_NONE) {
        d->frame_out[fi] = (uint32_t)d->nused_frames;
        d->used_frames[d->nused_frames++] = fi;
    }
    return d->frame_out[fi];
}

/* Interning is done when writing starts; these map every id to "unused". */
static int doc_prepare_output(html_doc *d)
{
    d->frame_out = malloc((d->nframes + 1) * sizeof *d->frame_out);
    d->used_frames = malloc((d->nframes + 1) * sizeof *d->used_frames);
    d->str_out = malloc((d->nstrs + 1) * sizeof *d->str_out);
    d->used_strs = malloc((d->nstrs + 1) * sizeof *d->used_strs);
    if (!d->frame_out || !d->used_frames || !d->str_out || !d->used_strs) return -1;
    memset(d->frame_out, 0xff, (d->nframes + 1) * sizeof *d->frame_out);
    memset(d->str_out, 0xff, (d->nstrs + 1) * sizeof *d->str_out);
    return 0;
}

/* ---- icicle trees ---- */

typedef struct node_key {
    const html_tree *t;
    uint32_t parent, code;
} node_key;

static int node_eq(const html_doc *d, uint32_t id, const void *key)
{
    const node_key *k = key;
    (void)d;
    return k->t->v[id].parent == k->parent && k->t->v[id].code == k->code;
}

static uint32_t tree_node(html_doc *d, html_tree *t, uint32_t parent, uint32_t code)
{
    node_key k = { t, parent, code };
    uint64_t h = html_hash(HTML_FNV, &parent, sizeof parent);
    h = html_hash(h, &code, sizeof code);
    size_t j = map_slot(&t->map, h, node_eq, d, &k, &d->oom);
    if (d->oom) return 0;
    if (t->map.id[j] != HTML_NONE) return t->map.id[j];
    if (html_grow((void **)&t->v, &t->cap, t->n, sizeof *t->v) != 0 || t->n >= HTML_NONE) {
        d->oom = 1;
        return 0;
    }
    html_node *n = &t->v[t->n];
    memset(n, 0, sizeof *n);
    n->code = code;
    n->parent = parent;
    n->first = n->next = HTML_NONE;
    if (t->n) {
        n->next = t->v[parent].first;
        t->v[parent].first = (uint32_t)t->n;
    }
    t->map.hash[j] = h;
    t->map.id[j] = (uint32_t)t->n;
    t->map.n++;
    return (uint32_t)t->n++;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

static void node_add(html_node *n, const merge_pair *q)
{
    n->wasteful = sat_add(n->wasteful, q->wasteful_bytes);
    n->approx = sat_add(n->approx, q->approx_bytes);
}

static uint64_t node_value(const html_node *n)
{
    return sat_add(n->wasteful, n->approx);
}

/* Charges q's wasteful bytes to every node on the path of context ci, root
 * first, ending in the leaf instruction. */
static void tree_add(html_doc *d, html_tree *t, size_t ci, const merge_pair *q)
{
    const merge_ctx *c = d->m->contexts[ci];
    size_t lo = d->ctx_first[ci], hi = d->ctx_first[ci + 1];
    uint32_t at = 0;
    if (hi - lo > HTML_FLAME_MAX_DEPTH) hi = lo + HTML_FLAME_MAX_DEPTH;
    node_add(&t->v[0], q);
    for (size_t k = hi; k-- > lo && !d->oom;) {
        at = tree_node(d, t, at, d->ctx_frames[k]);
        if (!d->oom) node_add(&t->v[at], q);
    }
    if (c->instruction[0] && !d->oom) {
        at = tree_node(d, t, at, HTML_INSN | d->ctx_insn[ci]);
        if (!d->oom) node_add(&t->v[at], q);
    }
}

static int u64_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x < y) - (x > y);
}

/* Picks the weight below which nodes are folded into their parents: under
 * HTML_FLAME_MIN_SHARE of the total, or whatever keeps the tree within
 * HTML_FLAME_MAX_NODES. A child never outweighs its parent, so every kept
 * node's ancestors are kept too. */
static int tree_prune(html_tree *t)
{
    uint64_t total = node_value(&t->v[0]);
    uint64_t th = (uint64_t)((double)total * HTML_FLAME_MIN_SHARE);
    uint64_t *w = malloc(t->n * sizeof *w);
    if (!w) return -1;
    size_t n = 0;
    for (size_t i = 1; i < t->n; i++)
        if (node_value(&t->v[i])) w[n++] = node_value(&t->v[i]);
    qsort(w, n, sizeof *w, u64_desc);
    if (th < 1) th = 1;
    if (n > HTML_FLAME_MAX_NODES && w[HTML_FLAME_MAX_NODES] >= th)
        th = w[HTML_FLAME_MAX_NODES] + 1;
    t->threshold = th;
    t->hidden = 0;
    for (size_t i = 0; i < n; i++) t->hidden += w[i] < th;
    free(w);
    return 0;
}

static int tree_build(html_doc *d, int trap)
{
    html_tree *t = &d->tree[trap];
    if (tree_node(d, t, 0, HTML_NONE) != 0) return -1;   /* the root is node 0 */
    for (size_t i = 0; i < d->m->npairs && !d->oom; i++) {
        const merge_pair *q = &d->m->pairs[i];
        tree_add(d, t, trap ? q->trap_id : q->watch_id, q);
    }
    return d->oom ? -1 : tree_prune(t);
}

static int node_cmp(const void *va, const void *vb, void *arg)
{
    const html_tree *t = arg;
    uint64_t x = node_value(&t->v[*(const uint32_t *)va]);
    uint64_t y = node_value(&t->v[*(const uint32_t *)vb]);
    if (x != y) return x < y ? 1 : -1;
    return (*(const uint32_t *)va > *(const uint32_t *)vb) -
           (*(const uint32_t *)va < *(const uint32_t *)vb);
}

/* [code, wasteful, approx, [children...]], heaviest child first; a frame
 * code is its index, an instruction -(string index + 1), the root null. */
static int tree_write(FILE *f, html_doc *d, const html_tree *t, uint32_t id)
{
    const html_node *n = &t->v[id];
    size_t nkids = 0;
    if (id == 0) fputs("[null", f);
    else if (n->code & HTML_INSN) fprintf(f, "[-%" PRIu32, use_str(d, n->code & ~HTML_INSN) + 1);
    else fprintf(f, "[%" PRIu32, use_frame(d, n->code));
    fprintf(f, ",%" PRIu64 ",%" PRIu64, n->wasteful, n->approx);
    for (uint32_t k = n->first; k != HTML_NONE; k = t->v[k].next)
        nkids += node_value(&t->v[k]) >= t->threshold;
    if (nkids) {
        uint32_t *kids = malloc(nkids * sizeof *kids);
        if (!kids) return -1;
        nkids = 0;
        for (uint32_t k = n->first; k != HTML_NONE; k = t->v[k].next)
            if (node_value(&t->v[k]) >= t->threshold) kids[nkids++] = k;
        qsort_r(kids, nkids, sizeof *kids, node_cmp, (void *)t);
        fputs(",[", f);
        int rc = 0;
        for (size_t i = 0; i < nkids && rc == 0; i++) {
            if (i) fputc(',', f);
            rc = tree_write(f, d, t, kids[i]);
        }
        free(kids);
        if (rc) return -1;
        fputc(']', f);
    }
    fputc(']', f);
    return 0;
}

/* ---- the document ---- */

static uint32_t doc_embed(html_doc *d, size_t ci)
{
    if (d->ctx_out[ci] == HTML_NONE) {
        d->ctx_out[ci] = (uint32_t)d->nembedded;
        d->embedded[d->nembedded++] = ci;
    }
    return d->ctx_out[ci];
}

static void write_header(FILE *f, const merge_model *m, size_t shown)
{
    char tol[64];
    snprintf(tol, sizeof tol, "%g", m->fp_tolerance);
    fputs("{\"format\":1,\"mode\":", f);
    json_escape_str(f, m->mode);
    fputs(",\"sampler\":", f);
    json_escape_str(f, m->sampler);
    if (m->interval_mixed) fputs(",\"interval\":null", f);
    else fprintf(f, ",\"interval\":%" PRIu64, m->interval);
    fputs(",\"fp_tolerance\":", f);
    json_escape_str(f, tol);
    fprintf(f, ",\"fraction_ci95\":[%.6f,%.6f]", m->fraction_lo, m->fraction_hi);
    if (merge_heaviest_decides(m))
        fprintf(f, ",\"heaviest\":{\"rank\":%zu,\"count\":%" PRIu64 ",\"share\":%.6f,\"without\":%.6f}",
                m->heaviest + 1, m->pairs[m->heaviest].count, m->heaviest_share, m->fraction_without_heaviest);
    fputs(",\"incomplete\":", f);
    if (m->incomplete) json_escape_str(f, m->incomplete);
    else fputs("null", f);
    fputs(",\"budget\":", f);
    json_write_budget(f, &m->budget);
    fprintf(f, ",\"checkpoint_threads\":%zu", m->checkpoints);
    fprintf(f, ",\"processes\":%zu,\"threads\":%zu,\n\"totals\":{\"count\":%" PRIu64
            ",\"bytes\":%" PRIu64 ",\"wasteful_bytes\":%" PRIu64 ",\"approx_bytes\":%" PRIu64
            "},\n\"pairs_total\":%zu,\"pairs_shown\":%zu,\n\"stats\":{",
            m->nprocesses, m->nthreads, m->count, m->bytes, m->wasteful_bytes, m->approx_bytes,
            m->npairs, shown);
    for (size_t i = 0; i < m->nstats; i++) {
        if (i) fputc(',', f);
        json_escape_str(f, m->stats[i].name);
        fprintf(f, ":%" PRIu64, m->stats[i].value);
    }
    fputs("},\n", f);
}

/* Pairs refer to embedded contexts; contexts and trees to frames and
 * strings, which are written last, once every use is known, and contexts
 * to code blobs, chosen once every embedded context is known. */
static int write_pairs(FILE *f, html_doc *d, size_t shown)
{
    fputs("\"pairs\":[", f);
    for (size_t i = 0; i < shown; i++) {
        const merge_pair *q = &d->m->pairs[i];
        uint32_t w = doc_embed(d, q->watch_id), t = doc_embed(d, q->trap_id);
        fprintf(f, "%s[%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]",
                i ? ",\n" : "", w, t, q->count, q->bytes, q->wasteful_bytes, q->approx_bytes);
    }
    fputs("],\n\"contexts\":[", f);
    d->code = html_code_plan(d->m, d->embedded, d->nembedded);
    if (!d->code) return -1;
    for (size_t i = 0; i < d->nembedded; i++) {
        size_t ci = d->embedded[i];
        fputs(i ? ",\n[[" : "[[", f);
        for (size_t k = d->ctx_first[ci]; k < d->ctx_first[ci + 1]; k++)
            fprintf(f, "%s%" PRIu32, k > d->ctx_first[ci] ? "," : "",
                    use_frame(d, d->ctx_frames[k]));
        fprintf(f, "],%" PRIu32, use_str(d, d->ctx_insn[ci]));
        html_code_ctx(f, d->code, ci);
        fputc(']', f);
    }
    fputs("],\n", f);
    return 0;
}

static int write_trees(FILE *f, html_doc *d)
{
    static const char *const names[2] = { "watch", "trap" };
    fputs("\"flame\":{", f);
    for (int s = 0; s < 2; s++) {
        const html_tree *t = &d->tree[s];
        fprintf(f, "%s\"%s\":{\"threshold\":%" PRIu64 ",\"hidden\":%zu,\"root\":", s ? ",\n" : "",
                names[s], t->threshold, t->hidden);
        if (tree_write(f, d, t, 0) != 0) return -1;
        fputc('}', f);
    }
    fputs("},\n", f);
    return 0;
}

static int write_strings(FILE *f, html_doc *d)
{
    fputs("\"frames\":[", f);
    for (size_t i = 0; i < d->nused_frames; i++) {
        const html_frame *fr = &d->frames[d->used_frames[i]];
        uint32_t fn = use_str(d, fr->function), file = use_str(d, fr->file);
        fprintf(f, "%s[%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRIu32 "]", i ? "," : "",
                fn, file, fr->line, use_str(d, fr->module));
    }
    fputs("],\n\"strings\":[", f);
    for (size_t i = 0; i < d->nused_strs; i++) {
        if (i) fputs(i % 8 ? "," : ",\n", f);
        json_escape_str(f, d->strs[d->used_strs[i]]);
    }
    fputs("],\n", f);
    int rc = html_code_write(f, d->code);
    fputc('}', f);
    return rc;
}

static void doc_free(html_doc *d)
{
    free(d->strs);
    free(d->str_map.hash);
    free(d->str_map.id);
    free(d->frames);
    free(d->frame_map.hash);
    free(d->frame_map.id);
    free(d->ctx_frames);
    free(d->ctx_first);
    free(d->ctx_out);
    free(d->embedded);
    free(d->ctx_insn);
    free(d->frame_out);
    free(d->used_frames);
    free(d->str_out);
    free(d->used_strs);
    html_code_free(d->code);
    for (int s = 0; s < 2; s++) {
        free(d->tree[s].v);
        free(d->tree[s].map.hash);
        free(d->tree[s].map.id);
    }
}

int html_write_report(FILE *f, const merge_model *m, size_t top)
{
    const char *page = (const char *)report_html;
    size_t len = report_html_len, shown = top && top < m->npairs ? top : m->npairs;
    const char *mark = memmem(page, len, HTML_MARKER, strlen(HTML_MARKER));
    if (!mark) return -1;
    html_doc d;
    memset(&d, 0, sizeof d);
    d.m = m;
    int rc = -1;
    if (doc_contexts(&d) == 0 && tree_build(&d, 0) == 0 && tree_build(&d, 1) == 0 &&
        doc_prepare_output(&d) == 0) {
        fwrite(page, 1, (size_t)(mark - page), f);
        write_header(f, m, shown);
        rc = write_pairs(f, &d, shown);
        if (rc == 0) rc = write_trees(f, &d);
        if (rc == 0) rc = write_strings(f, &d);
        mark += strlen(HTML_MARKER);
        fwrite(mark, 1, len - (size_t)(mark - page), f);
    }
    doc_free(&d);
    return rc || ferror(f) ? -1 : 0;
}

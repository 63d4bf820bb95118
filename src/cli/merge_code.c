/*
 * merge_code.c - the machine code that merged contexts refer to.
 *
 * Owns code-blob identity in the report model. A JIT-compiled method's code
 * (profile.h prof_code) is kept once however many threads' profiles carry
 * it: two blobs are the same when name, start, size and bytes agree (their
 * line tables then describe the same code; the first one seen is kept).
 * Pcs only mean something within one process, which is why start is part
 * of the identity: a context's pc always lies in the blob it names. Only
 * blobs that a context's leaf instruction lies in are copied into the
 * model, so a run whose profiles carry many methods keeps few of them.
 */
#include "merge_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct code_key {
    const prof_code *c;
} code_key;

static uint64_t code_hash(const prof_code *c)
{
    const char *name = c->name ? c->name : "";
    uint64_t h = merge_hash_more(MERGE_FNV, name, strlen(name) + 1);
    h = merge_hash_more(h, &c->start, sizeof c->start);
    h = merge_hash_more(h, &c->size, sizeof c->size);
    return merge_hash_more(h, c->bytes, c->size);
}

static int code_eq(const merge_model *m, size_t index, const void *key)
{
    const prof_code *a = m->codes[index], *b = ((const code_key *)key)->c;
    return a->start == b->start && a->size == b->size &&
           strcmp(a->name, b->name ? b->name : "") == 0 &&
           memcmp(a->bytes, b->bytes, a->size) == 0;
}

static void code_free(prof_code *c)
{
    if (!c) return;
    prof_code_clear(c);
    free(c);
}

/* A deep copy of c, or NULL when out of memory. NULL strings become "". */
static prof_code *code_copy(const prof_code *c)
{
    prof_code *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->name = strdup(c->name ? c->name : "");
    d->start = c->start;
    d->size = c->size;
    d->bytes = malloc(c->size ? c->size : 1);
    d->lines = calloc(c->nlines ? c->nlines : 1, sizeof *d->lines);
    int ok = d->name && d->bytes && d->lines;
    if (ok) memcpy(d->bytes, c->bytes, c->size);
    for (uint32_t j = 0; ok && j < c->nlines; j++) {
        prof_code_line *l = &d->lines[d->nlines++];
        l->offset = c->lines[j].offset;
        l->line = c->lines[j].line;
        l->function = strdup(c->lines[j].function ? c->lines[j].function : "");
        l->file = strdup(c->lines[j].file ? c->lines[j].file : "");
        ok = l->function && l->file;
    }
    if (!ok) {
        code_free(d);
        return NULL;
    }
    return d;
}

/* The model index of code c, copying it in when new; MERGE_NONE when out
 * of memory. */
static size_t code_intern(merge_model *m, const prof_code *c)
{
    code_key k = { c };
    uint64_t h = code_hash(c);
    size_t idx = merge_map_find(m, m->code_map, h, code_eq, &k);
    if (idx != MERGE_NONE) return idx;
    if (merge_grow((void **)&m->codes, &m->cap_codes, m->ncodes, sizeof *m->codes) != 0)
        return MERGE_NONE;
    prof_code *d = code_copy(c);
    if (!d || merge_map_insert(m->code_map, h, m->ncodes) != 0) {
        code_free(d);
        return MERGE_NONE;
    }
    m->codes[m->ncodes] = d;
    return m->ncodes++;
}

static int start_cmp(const void *a, const void *b, void *arg)
{
    const prof_code *codes = arg;
    uint64_t x = codes[*(const size_t *)a].start, y = codes[*(const size_t *)b].start;
    return (x > y) - (x < y);
}

int merge_code_src_init(merge_code_src *s, const profile *p)
{
    memset(s, 0, sizeof *s);
    s->p = p;
    if (!p->ncodes || !p->codes) return 0;
    s->order = malloc(p->ncodes * sizeof *s->order);
    s->interned = malloc(p->ncodes * sizeof *s->interned);
    if (!s->order || !s->interned) {
        merge_code_src_free(s);
        return -1;
    }
    for (size_t i = 0; i < p->ncodes; i++) {
        s->order[i] = i;
        s->interned[i] = MERGE_NONE;
    }
    /* profile_read gives codes by start already; profiles built in memory
     * need not. */
    qsort_r(s->order, p->ncodes, sizeof *s->order, start_cmp, p->codes);
    return 0;
}

void merge_code_src_free(merge_code_src *s)
{
    free(s->order);
    free(s->interned);
    memset(s, 0, sizeof *s);
}

int merge_code_at(merge_model *m, merge_code_src *s, uint64_t pc, size_t *out)
{
    *out = MERGE_NO_CODE;
    if (!s->order) return 0;
    /* The last code starting at or below pc is the only one that can hold it. */
    size_t lo = 0, hi = s->p->ncodes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->p->codes[s->order[mid]].start <= pc) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return 0;
    size_t ci = s->order[lo - 1];
    const prof_code *c = &s->p->codes[ci];
    if (pc - c->start >= c->size || !c->bytes) return 0;
    if (s->interned[ci] == MERGE_NONE && (s->interned[ci] = code_intern(m, c)) == MERGE_NONE)
        return -1;
    *out = s->interned[ci];
    return 0;
}

void merge_code_free_all(merge_model *m)
{
    for (size_t i = 0; i < m->ncodes; i++) code_free(m->codes[i]);
    free(m->codes);
    if (m->code_map) free(m->code_map->slots);
    free(m->code_map);
}

/*
 * exact_raw.c - parses the exact tool's raw file (format: exact_convert.c).
 *
 * The file comes from our own tool, but a run killed mid-write or a full
 * disk can still leave anything: every record is checked (field count,
 * numbers, references to earlier records), and the file must end with
 * "end", so a damaged file is an error, never a wrong profile.
 */
#include "exact_raw.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "access.h"
#include "decode.h"
#include "profile.h"
#include "profile_read_internal.h"

#define RAW_MAX_FIELDS 12

typedef struct raw_line {
    char *f[RAW_MAX_FIELDS];
    int n;
    size_t lineno;
} raw_line;

static int raw_fail(char *err, size_t errlen, const raw_line *l, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(err, errlen, "exact raw file, line %zu: ", l ? l->lineno : 0);
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < errlen)
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

/* Undoes the writer's escapes (\\ \t \n \r) in place. */
static void unescape(char *s)
{
    char *o = s;
    for (; *s; s++) {
        if (*s == '\\' && s[1]) {
            s++;
            *o++ = *s == 't' ? '\t' : *s == 'n' ? '\n' : *s == 'r' ? '\r' : *s;
        } else {
            *o++ = *s;
        }
    }
    *o = '\0';
}

static void split(char *line, raw_line *l)
{
    l->n = 0;
    for (char *p = line; l->n < RAW_MAX_FIELDS;) {
        l->f[l->n++] = p;
        char *tab = strchr(p, '\t');
        if (!tab)
            break;
        *tab = '\0';
        p = tab + 1;
    }
    for (int i = 0; i < l->n; i++)
        unescape(l->f[i]);
}

static int num(const char *s, uint64_t *out)
{
    char *end;
    if (!*s || *s == '-')
        return -1;
    errno = 0;
    *out = strtoull(s, &end, 0);
    return errno || *end ? -1 : 0;
}

/* Room for index need, zero-filled: ids index these arrays directly and
 * may skip (only used contexts are written), which merge_grow's append
 * pattern does not cover. */
static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need < *cap)
        return 0;
    size_t ncap = *cap ? *cap : 64;
    while (ncap <= need)
        ncap *= 2;
    void *p = realloc(*arr, ncap * elem);
    if (!p)
        return -1;
    memset((char *)p + *cap * elem, 0, (ncap - *cap) * elem);
    *arr = p;
    *cap = ncap;
    return 0;
}

/* Valgrind names versioned symbols "__libc_start_main@@GLIBC_2.34"; the
 * sampled mode's symbolizer does not, and reports match frames by name. */
static void strip_version(char *function)
{
    char *at = strchr(function, '@');
    if (at && at != function && function[0] != '[')
        *at = '\0';
}

static int sym_fields(raw_line *l, int at, exact_sym *s)
{
    uint64_t line;
    strip_version(l->f[at + 1]);
    if (num(l->f[at], &s->pc) < 0 || num(l->f[at + 3], &line) < 0 || line > UINT32_MAX)
        return -1;
    s->function = l->f[at + 1];
    s->file = l->f[at + 2];
    s->line = (uint32_t)line;
    s->module = l->f[at + 4];
    return 0;
}

/* The index of node id (0 for the root), or -1 when no such node came yet. */
static long node_index(const exact_raw *r, uint64_t id)
{
    size_t lo = 1, hi = r->nnodes;
    if (id == 0)
        return 0;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r->nodes[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < r->nnodes && r->nodes[lo].id == id ? (long)lo : -1;
}

/* Nodes come by increasing id, each after its parent. */
static int parse_node(exact_raw *r, raw_line *l, size_t *cap, char *err, size_t errlen)
{
    uint64_t id, parent;
    long pi;
    if (l->n != 8 || num(l->f[1], &id) < 0 || num(l->f[2], &parent) < 0 || id == 0 || id > UINT32_MAX ||
        (r->nnodes > 1 && id <= r->nodes[r->nnodes - 1].id))
        return raw_fail(err, errlen, l, "bad node record");
    if ((pi = node_index(r, parent)) < 0)
        return raw_fail(err, errlen, l, "node %" PRIu64 " refers to unknown node %" PRIu64, id, parent);
    if (grow((void **)&r->nodes, cap, r->nnodes ? r->nnodes : 1, sizeof(*r->nodes)) < 0)
        return raw_fail(err, errlen, l, "out of memory");
    r->nnodes = r->nnodes ? r->nnodes : 1;
    exact_node_raw *n = &r->nodes[r->nnodes];
    if (sym_fields(l, 3, &n->sym) < 0)
        return raw_fail(err, errlen, l, "bad node record");
    n->id = (uint32_t)id;
    n->parent = (uint32_t)pi;
    r->nnodes++;
    return 0;
}

static int nibble(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* n bytes from 2n lower-case hex digits; 0, or -1 on another character. */
static int unhex(const char *hex, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int hi = nibble(hex[2 * i]), lo = hi < 0 ? -1 : nibble(hex[2 * i + 1]);
        if (lo < 0)
            return -1;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

/* Text and element type of an instruction from its bytes in hex. */
static int decode_leaf(exact_leaf *lf, const char *hex)
{
    uint8_t code[16];
    size_t len = strlen(hex) / 2, used = 0;
    char text[160] = "";
    greg_t regs[NGREG] = { 0 };
    mem_access a;
    if (strlen(hex) % 2 || (len <= sizeof(code) && unhex(hex, code, len) < 0))
        return -1;
    if (len && len <= sizeof(code)) {
        decode_format_bytes(code, len, lf->sym.pc, 0, text, sizeof(text), &used);
        if (decode_access_bytes(code, len, lf->sym.pc, regs, 0, 0, 0, &a) == DROP_NONE)
            lf->fp = a.fp;
    }
    lf->instruction = strdup(text);
    return lf->instruction ? 0 : -1;
}

/* The code a leaf lies in: 0, or a code before it that holds its pc. */
static int leaf_code(const exact_raw *r, exact_leaf *lf, const char *field)
{
    uint64_t code;
    if (num(field, &code) < 0)
        return -1;
    lf->code = (uint32_t)code;
    if (!code)
        return 0;
    if (code >= r->ncodes || !r->codes[code].present)
        return -1;
    const exact_code_raw *c = &r->codes[code];
    return lf->sym.pc < c->start || lf->sym.pc - c->start >= c->size ? -1 : 0;
}

static int parse_leaf(exact_raw *r, raw_line *l, size_t *cap, char *err, size_t errlen)
{
    uint64_t id, node;
    long ni;
    if (l->n != 10 || num(l->f[1], &id) < 0 || num(l->f[2], &node) < 0 || id == 0 || id > EXACT_RAW_MAX_LEAF)
        return raw_fail(err, errlen, l, "bad leaf record");
    if ((ni = node_index(r, node)) < 0)
        return raw_fail(err, errlen, l, "leaf %" PRIu64 " refers to unknown node %" PRIu64, id, node);
    if (grow((void **)&r->leaves, cap, id, sizeof(*r->leaves)) < 0)
        return raw_fail(err, errlen, l, "out of memory");
    exact_leaf *lf = &r->leaves[id];
    if (lf->present || sym_fields(l, 3, &lf->sym) < 0)
        return raw_fail(err, errlen, l, "bad leaf record");
    lf->present = 1;
    lf->node = (uint32_t)ni;
    r->nleaves = id + 1 > r->nleaves ? id + 1 : r->nleaves;
    if (leaf_code(r, lf, l->f[9]) < 0)
        return raw_fail(err, errlen, l, "leaf %" PRIu64 " names no code holding its pc", id);
    return decode_leaf(lf, l->f[8]) < 0 ? raw_fail(err, errlen, l, "bad instruction bytes") : 0;
}

/* code <id> <name> <start> <hex>: ids count from 1, in order. */
static int parse_code(exact_raw *r, raw_line *l, size_t *cap, char *err, size_t errlen)
{
    uint64_t id, start;
    size_t len = l->n == 5 ? strlen(l->f[4]) : 0;
    if (l->n != 5 || num(l->f[1], &id) < 0 || id != (r->ncodes ? r->ncodes : 1) || num(l->f[3], &start) < 0 ||
        len == 0 || len % 2 || len / 2 > PROFILE_CODE_MAX_SIZE || start > UINT64_MAX - (len / 2 - 1))
        return raw_fail(err, errlen, l, "bad code record");
    if (grow((void **)&r->codes, cap, id, sizeof(*r->codes)) < 0)
        return raw_fail(err, errlen, l, "out of memory");
    exact_code_raw *c = &r->codes[id];
    r->ncodes = id + 1;   /* from here exact_raw_free frees its bytes */
    c->size = (uint32_t)(len / 2);
    if (!(c->bytes = malloc(c->size)))
        return raw_fail(err, errlen, l, "out of memory");
    if (unhex(l->f[4], c->bytes, c->size) < 0)
        return raw_fail(err, errlen, l, "bad code bytes");
    c->present = 1;
    c->name = l->f[2];
    c->start = start;
    return 0;
}

/* codeline <code> <offset> <line> <function> <file>: by increasing offset. */
static int parse_codeline(exact_raw *r, raw_line *l, char *err, size_t errlen)
{
    uint64_t id, offset, line;
    if (l->n != 6 || num(l->f[1], &id) < 0 || num(l->f[2], &offset) < 0 || num(l->f[3], &line) < 0 ||
        line > UINT32_MAX || id == 0 || id >= r->ncodes)
        return raw_fail(err, errlen, l, "bad codeline record");
    exact_code_raw *c = &r->codes[id];
    if (offset >= c->size || (c->nlines && offset <= c->lines[c->nlines - 1].offset))
        return raw_fail(err, errlen, l, "codeline offsets must increase and stay inside the code");
    if (grow((void **)&c->lines, &c->cap_lines, c->nlines, sizeof(*c->lines)) < 0)
        return raw_fail(err, errlen, l, "out of memory");
    c->lines[c->nlines++] = (exact_code_line){ (uint32_t)offset, (uint32_t)line, l->f[4], l->f[5] };
    return 0;
}

static exact_thread_raw *thread_of(exact_raw *r, uint64_t index)
{
    for (size_t i = 0; i < r->nthreads; i++)
        if (r->threads[i].index == index)
            return &r->threads[i];
    return NULL;
}

static int parse_thread(exact_raw *r, raw_line *l, size_t *cap, char *err, size_t errlen)
{
    uint64_t index, tid;
    if (l->n != 3 || num(l->f[1], &index) < 0 || num(l->f[2], &tid) < 0 || thread_of(r, index) ||
        index > UINT32_MAX || tid > INT64_MAX)
        return raw_fail(err, errlen, l, "bad thread record");
    if (grow((void **)&r->threads, cap, r->nthreads, sizeof(*r->threads)) < 0)
        return raw_fail(err, errlen, l, "out of memory");
    r->threads[r->nthreads++] = (exact_thread_raw){ .index = (uint32_t)index, .os_tid = (int64_t)tid };
    return 0;
}

static int parse_stat(exact_raw *r, raw_line *l, char *err, size_t errlen)
{
    uint64_t index, value;
    exact_thread_raw *t;
    if (l->n != 4 || num(l->f[1], &index) < 0 || num(l->f[3], &value) < 0 || !(t = thread_of(r, index)))
        return raw_fail(err, errlen, l, "bad stat record");
    exact_stat_raw *s = realloc(t->stats, (t->nstats + 1) * sizeof(*s));
    if (!s)
        return raw_fail(err, errlen, l, "out of memory");
    t->stats = s;
    t->stats[t->nstats++] = (exact_stat_raw){ l->f[2], value };
    return 0;
}

static int leaf_known(const exact_raw *r, uint64_t id)
{
    return id < r->nleaves && r->leaves[id].present;
}

static int parse_pair(exact_raw *r, raw_line *l, size_t *cap, char *err, size_t errlen)
{
    uint64_t v[8];
    if (l->n != 9)
        return raw_fail(err, errlen, l, "bad pair record");
    for (int i = 0; i < 8; i++)
        if (num(l->f[i + 1], &v[i]) < 0)
            return raw_fail(err, errlen, l, "bad pair record");
    if (!thread_of(r, v[0]) || !leaf_known(r, v[1]) || !leaf_known(r, v[2]))
        return raw_fail(err, errlen, l, "pair refers to an unknown thread or context");
    /* The tool counts approximately silent bytes only where the value
     * changed, so wasteful and approximate bytes are disjoint (as a
     * profile's reader requires of the pair written from this one). */
    if (v[5] > v[4] || v[6] > v[4] - v[5] || v[7] > v[4] - v[5])
        return raw_fail(err, errlen, l, "pair has more wasteful bytes than bytes");
    if (grow((void **)&r->pairs, cap, r->npairs, sizeof(*r->pairs)) < 0)
        return raw_fail(err, errlen, l, "out of memory");
    r->pairs[r->npairs++] = (exact_pair_raw){ (uint32_t)v[0], (uint32_t)v[1], (uint32_t)v[2], v[3],
                                              v[4], v[5], v[6], v[7] };
    return 0;
}

/* fold|unnamed <index> <count> <bytes> <wasteful>: pairs the tool wrote
 * without contexts (small ones; ones past its context table). */
static int parse_fold(exact_raw *r, raw_line *l, char *err, size_t errlen)
{
    uint64_t index, v[3];
    exact_thread_raw *t;
    if (l->n != 5 || num(l->f[1], &index) < 0 || num(l->f[2], &v[0]) < 0 || num(l->f[3], &v[1]) < 0 ||
        num(l->f[4], &v[2]) < 0 || !(t = thread_of(r, index)) || v[2] > v[1])
        return raw_fail(err, errlen, l, l->f[0][0] == 'f' ? "bad fold record" : "bad unnamed record");
    exact_fold_raw *f = l->f[0][0] == 'f' ? &t->small : &t->unnamed;
    if (__builtin_add_overflow(f->count, v[0], &f->count) || __builtin_add_overflow(f->bytes, v[1], &f->bytes) ||
        __builtin_add_overflow(f->wasteful, v[2], &f->wasteful))
        return raw_fail(err, errlen, l, "counts past 2^64");
    return 0;
}

static int parse_header(exact_raw *r, raw_line *l, char *err, size_t errlen)
{
    const char *k = l->f[0];
    uint64_t v;
    if (l->n != 2)
        return raw_fail(err, errlen, l, "bad %s record", k);
    if (!strcmp(k, "mode"))
        snprintf(r->mode, sizeof(r->mode), "%s", l->f[1]);
    else if (!strcmp(k, "command"))
        r->command = l->f[1];
    else if (!strcmp(k, "fp_tolerance")) {
        /* As a profile's reader takes it: the profiles written carry it. */
        if (pr_double(l->f[1], &r->fp_tolerance) < 0)
            return raw_fail(err, errlen, l, "bad fp_tolerance record");
    }
    else if (num(l->f[1], &v) < 0)
        return raw_fail(err, errlen, l, "bad %s record", k);
    else if (!strcmp(k, "pid"))
        r->pid = (int64_t)v;
    else if (!strcmp(k, "instructions"))
        r->instructions = v;
    else if (!strcmp(k, "cut"))
        r->cut = v != 0;
    else if (!strcmp(k, "contexts"))
        r->contexts = v;
    else if (!strcmp(k, "code_kept"))
        r->code_kept = v;
    else if (!strcmp(k, "code_left_out"))
        r->code_left_out = v;
    return 0;
}

static int parse_line(exact_raw *r, raw_line *l, size_t caps[5], char *err, size_t errlen)
{
    const char *k = l->f[0];
    if (!strcmp(k, "code")) return parse_code(r, l, &caps[4], err, errlen);
    if (!strcmp(k, "codeline")) return parse_codeline(r, l, err, errlen);
    if (!strcmp(k, "node")) return parse_node(r, l, &caps[0], err, errlen);
    if (!strcmp(k, "leaf")) return parse_leaf(r, l, &caps[1], err, errlen);
    if (!strcmp(k, "thread")) return parse_thread(r, l, &caps[2], err, errlen);
    if (!strcmp(k, "stat")) return parse_stat(r, l, err, errlen);
    if (!strcmp(k, "pair")) return parse_pair(r, l, &caps[3], err, errlen);
    if (!strcmp(k, "fold") || !strcmp(k, "unnamed")) return parse_fold(r, l, err, errlen);
    if (!strcmp(k, "written")) return 0;
    return parse_header(r, l, err, errlen);
}

/* Whether the file's counts and bytes sum within 64 bits: the converter
 * adds them up per thread (the folds) and over the file (the fold bound),
 * and a sum that wrapped would write a pair the reader refuses. A real run
 * is far from the limit; a damaged file need not be. */
static int totals_fit(const exact_raw *r)
{
    uint64_t count = 0, bytes = 0;
    for (size_t i = 0; i < r->npairs; i++)
        if (__builtin_add_overflow(count, r->pairs[i].count, &count) ||
            __builtin_add_overflow(bytes, r->pairs[i].bytes, &bytes))
            return 0;
    for (size_t i = 0; i < r->nthreads; i++) {
        const exact_thread_raw *t = &r->threads[i];
        if (__builtin_add_overflow(count, t->small.count, &count) ||
            __builtin_add_overflow(count, t->unnamed.count, &count) ||
            __builtin_add_overflow(bytes, t->small.bytes, &bytes) ||
            __builtin_add_overflow(bytes, t->unnamed.bytes, &bytes))
            return 0;
    }
    return 1;
}

int exact_raw_parse(char *buf, exact_raw *r, char *err, size_t errlen)
{
    size_t caps[5] = { 0 };
    int ended = 0;
    raw_line l = { .lineno = 0 };
    memset(r, 0, sizeof(*r));
    r->command = "";
    r->fp_tolerance = 0.01;
    for (char *line = buf, *next; line && *line && !ended; line = next) {
        next = strchr(line, '\n');
        if (!next)
            return exact_raw_free(r), raw_fail(err, errlen, &l, "truncated (no end record)");
        *next++ = '\0';
        l.lineno++;
        split(line, &l);
        if (l.lineno == 1 && (strcmp(l.f[0], "wasp-exact") || l.n != 2 || strcmp(l.f[1], "2")))
            return exact_raw_free(r), raw_fail(err, errlen, &l, "not a wasp exact raw file (version 2)");
        ended = !strcmp(l.f[0], "end");
        if (l.lineno > 1 && !ended && parse_line(r, &l, caps, err, errlen) < 0)
            return exact_raw_free(r), -1;
    }
    if (!ended)
        return exact_raw_free(r), raw_fail(err, errlen, &l, "truncated (no end record)");
    if (strcmp(r->mode, "dead-store") && strcmp(r->mode, "silent-store") && strcmp(r->mode, "silent-load"))
        return exact_raw_free(r), raw_fail(err, errlen, NULL, "unknown mode '%s'", r->mode);
    if (!totals_fit(r))
        return exact_raw_free(r), raw_fail(err, errlen, NULL, "counts past 2^64 (a damaged file)");
    return 0;
}

void exact_raw_free(exact_raw *r)
{
    for (size_t i = 0; i < r->nleaves; i++)
        free(r->leaves[i].instruction);
    for (size_t i = 0; i < r->nthreads; i++)
        free(r->threads[i].stats);
    for (size_t i = 0; i < r->ncodes; i++) {
        free(r->codes[i].bytes);
        free(r->codes[i].lines);
    }
    free(r->codes);
    free(r->nodes);
    free(r->leaves);
    free(r->threads);
    free(r->pairs);
    memset(r, 0, sizeof(*r));
}

uint64_t exact_raw_stat(const exact_thread_raw *t, const char *name)
{
    for (size_t i = 0; i < t->nstats; i++)
        if (!strcmp(t->stats[i].name, name))
            return t->stats[i].value;
    return 0;
}

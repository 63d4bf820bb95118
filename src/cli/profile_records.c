/*
 * profile_records.c - each record of docs/profile-format.md into the
 * profile, every reference checked (ids count up, a ctx names earlier
 * frames, a pair earlier contexts, a codeline an earlier code) and every
 * table capped (profile_read_internal.h), so nothing is ever half filled
 * or unbounded.
 */
#include "profile_read_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const pr_header_keys[] = {
    "mode", "sampler", "pid", "tid", "thread", "command", "interval", "fp_tolerance", "watch_check",
};
#define PR_NHEADER (sizeof pr_header_keys / sizeof pr_header_keys[0])

/* "fires 4/4", "never-fires 0/4", "unchecked": kept as written, but only
 * in that shape, so a report can trust the word it prints. */
static int pr_watch_check(pr_state *s)
{
    char *t, word[16];
    int fired, wanted, end = 0;
    if (pr_field_str(s, 1, &t, "bad escape") != 0) return -1;
    int ok = strlen(t) < sizeof s->p->watch_check &&
             (!strcmp(t, "unchecked") ||
              (sscanf(t, "%15[a-z-] %d/%d%n", word, &fired, &wanted, &end) == 3 && !t[end] &&
               fired >= 0 && fired <= wanted && wanted <= 4));
    if (ok) strcpy(s->p->watch_check, t);
    free(t);
    return ok ? 0 : pr_bad(s, "unknown value");
}

static int pr_header(pr_state *s)
{
    profile *p = s->p;
    const char *v = s->f[1];
    if (s->nf != 2) return pr_bad(s, "expected 2 fields");
    switch (s->nheader) {
    case 0: case 1: {
        char *t;
        if (pr_field_str(s, 1, &t, "bad escape") != 0) return -1;
        int ok = s->nheader == 0
            ? !strcmp(t, "dead-store") || !strcmp(t, "silent-store") || !strcmp(t, "silent-load")
            : !strcmp(t, "software") || !strcmp(t, "ctimer") || !strcmp(t, "pmu") || !strcmp(t, "exact");
        if (ok) strcpy(s->nheader == 0 ? p->mode : p->sampler, t);
        free(t);
        return ok ? 0 : pr_bad(s, "unknown value");
    }
    case 2: return pr_i64(v, &p->pid) ? pr_bad(s, "not an integer") : 0;
    case 3: return pr_i64(v, &p->tid) ? pr_bad(s, "not an integer") : 0;
    case 4: return pr_field_str(s, 1, &p->thread_name, "bad escape");
    case 5: return pr_field_str(s, 1, &p->command, "bad escape");
    case 6: return pr_u64(v, &p->interval) ? pr_bad(s, "not an integer") : 0;
    case 7: return pr_double(v, &p->fp_tolerance) ? pr_bad(s, "not a number") : 0;
    default: return pr_watch_check(s);
    }
}

static int pr_stat(pr_state *s)
{
    profile *p = s->p;
    if (s->nf != 3) return pr_bad(s, "expected 3 fields");
    if (pr_grow(s, (void **)&p->stats, &s->cap_stats, p->nstats, sizeof *p->stats,
                PR_MAX_STATS, "stat"))
        return -1;
    prof_stat *st = &p->stats[p->nstats++];
    memset(st, 0, sizeof *st);
    if (pr_field_str(s, 1, &st->name, "bad escape") != 0) return -1;
    if (!st->name[0]) return pr_bad(s, "empty name");
    return pr_u64(s->f[2], &st->value) ? pr_bad(s, "value not an integer") : 0;
}

static int pr_id(pr_state *s, size_t expected)
{
    uint64_t id;
    if (pr_u64(s->f[1], &id) != 0 || id != expected) return pr_bad(s, "ids must count 0,1,2...");
    return 0;
}

/* For a record with an id (frame, ctx, code): checks its field count and
 * id, and appends a zeroed element to *arr. The element is counted before
 * it is filled so profile_free releases a partial one. NULL on failure,
 * with the message set. */
static void *pr_append(pr_state *s, size_t nfields, void **arr, size_t *cap, size_t *n,
                       size_t elem, size_t limit)
{
    char what[32];
    snprintf(what, sizeof what, "expected %zu fields", nfields);
    if (s->nf != nfields) {
        pr_bad(s, what);
        return NULL;
    }
    if (pr_id(s, *n) != 0 || pr_grow(s, arr, cap, *n, elem, limit, s->f[0]) != 0) return NULL;
    void *e = (char *)*arr + elem * (*n)++;
    memset(e, 0, elem);
    return e;
}

static int pr_frame(pr_state *s)
{
    profile *p = s->p;
    prof_frame *fr = pr_append(s, 8, (void **)&p->frames, &s->cap_frames, &p->nframes,
                               sizeof *p->frames, PR_MAX_FRAMES);
    if (!fr) return -1;
    static const size_t idx[] = { 2, 3, 5, 7 };
    static const char *const what[] = { "bad escape in function", "bad escape in file",
                                        "bad escape in module", "bad escape in instruction" };
    char **const dst[] = { &fr->function, &fr->file, &fr->module, &fr->instruction };
    if (pr_fields_packed(s, idx, dst, 4, what) != 0) return -1;
    if (pr_u32(s->f[4], &fr->line) != 0) return pr_bad(s, "line not an integer");
    if (pr_hex64(s->f[6], &fr->pc) != 0) return pr_bad(s, "pc not 0x-hex");
    return 0;
}

static int pr_ctx(pr_state *s)
{
    profile *p = s->p;
    prof_context *c = pr_append(s, 3, (void **)&p->contexts, &s->cap_contexts, &p->ncontexts,
                                sizeof *p->contexts, PR_MAX_CONTEXTS);
    if (!c) return -1;
    size_t n = 1;
    for (const char *t = s->f[2]; *t; t++) n += *t == ',';
    /* Counted before anything is allocated: a line of commas is refused,
     * not turned into 4 bytes of memory per comma. */
    if (n > PR_MAX_CTX_FRAMES) return pr_bad(s, "more than 1024 frames");
    c->frames = malloc(n * sizeof *c->frames);
    if (!c->frames) return pr_fail(s, "out of memory");
    char *t = s->f[2];
    for (size_t i = 0; i < n; i++) {
        char *comma = strchr(t, ',');
        if (comma) *comma = '\0';
        if (pr_u32(t, &c->frames[i]) != 0) return pr_bad(s, "frame id not an integer");
        if (c->frames[i] >= p->nframes) return pr_bad(s, "refers to an undefined frame");
        c->nframes++;
        t = comma ? comma + 1 : t + strlen(t);
    }
    return 0;
}

static int pr_pair(pr_state *s)
{
    profile *p = s->p;
    if (s->nf != 7) return pr_bad(s, "expected 7 fields");
    if (pr_grow(s, (void **)&p->pairs, &s->cap_pairs, p->npairs, sizeof *p->pairs,
                PR_MAX_PAIRS, "pair"))
        return -1;
    prof_pair q;
    if (pr_u32(s->f[1], &q.watch_ctx) || pr_u32(s->f[2], &q.trap_ctx) ||
        pr_u64(s->f[3], &q.count) || pr_u64(s->f[4], &q.bytes) ||
        pr_u64(s->f[5], &q.wasteful_bytes) || pr_u64(s->f[6], &q.approx_bytes))
        return pr_bad(s, "not an integer");
    if (q.watch_ctx >= p->ncontexts || q.trap_ctx >= p->ncontexts)
        return pr_bad(s, "refers to an undefined context");
    /* Wasteful and approximate bytes are disjoint subsets of the monitored
     * bytes; anything else would make fractions exceed 100%. */
    if (q.wasteful_bytes > q.bytes || q.approx_bytes > q.bytes - q.wasteful_bytes)
        return pr_bad(s, "more wasteful bytes than bytes");
    p->pairs[p->npairs++] = q;
    return 0;
}

/* Two lower-case hex digits a byte, the whole field; the caller checked
 * that the length is even. */
static int pr_hex_bytes(const char *t, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < 2 * n; i++) {
        int d = pr_xdigit(t[i], 0);
        if (d < 0) return -1;
        out[i / 2] = (uint8_t)(i % 2 ? out[i / 2] | d : d << 4);
    }
    return 0;
}

static int pr_code(pr_state *s)
{
    profile *p = s->p;
    prof_code *c = pr_append(s, 5, (void **)&p->codes, &s->cap_codes, &p->ncodes,
                             sizeof *p->codes, PR_MAX_CODES);
    if (!c) return -1;
    if (pr_field_str(s, 2, &c->name, "bad escape in name") != 0) return -1;
    if (pr_hex64(s->f[3], &c->start) != 0) return pr_bad(s, "start not 0x-hex");
    size_t len = strlen(s->f[4]);
    if (len == 0 || len % 2 || len / 2 > PROFILE_CODE_MAX_SIZE)
        return pr_bad(s, "bytes not 1 to 4 MiB of hex");
    c->size = (uint32_t)(len / 2);
    c->bytes = malloc(c->size);
    if (!c->bytes) return pr_fail(s, "out of memory");
    if (pr_hex_bytes(s->f[4], c->bytes, c->size) != 0)
        return pr_bad(s, "bytes not lower-case hex");
    if (c->start > UINT64_MAX - (c->size - 1)) return pr_bad(s, "wraps past the top of memory");
    const prof_code *prev = p->ncodes > 1 ? c - 1 : NULL;
    if (prev && (c->start < prev->start || c->start - prev->start < prev->size))
        return pr_bad(s, "overlaps or precedes the code before it");
    return 0;
}

static int pr_codeline(pr_state *s)
{
    profile *p = s->p;
    uint32_t id, offset, line;
    if (s->nf != 6) return pr_bad(s, "expected 6 fields");
    if (pr_u32(s->f[1], &id) || pr_u32(s->f[2], &offset) || pr_u32(s->f[3], &line))
        return pr_bad(s, "not an integer");
    if (id >= p->ncodes) return pr_bad(s, "refers to an undefined code");
    if (++s->ncodelines > PR_MAX_CODELINES)
        return pr_fail_at(s, "more than %u codeline records, more than wasp writes",
                          PR_MAX_CODELINES);
    prof_code *c = &p->codes[id];
    if (offset >= c->size) return pr_bad(s, "offset beyond the code");
    if (c->nlines && offset <= c->lines[c->nlines - 1].offset)
        return pr_bad(s, "offsets must increase");
    /* Capacity is implicit: 4, then doubling at every power of two. */
    uint32_t n = c->nlines;
    if (n == 0 || (n >= 4 && (n & (n - 1)) == 0)) {
        prof_code_line *a = realloc(c->lines, (n ? 2 * (size_t)n : 4) * sizeof *a);
        if (!a) return pr_fail(s, "out of memory");
        c->lines = a;
    }
    prof_code_line *l = &c->lines[c->nlines++];
    memset(l, 0, sizeof *l);
    l->offset = offset;
    l->line = line;
    if (pr_field_str(s, 4, &l->function, "bad escape in function") ||
        pr_field_str(s, 5, &l->file, "bad escape in file"))
        return -1;
    return 0;
}


/* Splits the record at line (length len, without its '\n') into s->f. */
int pr_split(pr_state *s, char *line, size_t len)
{
    s->nf = 0;
    if (memchr(line, '\0', len)) return pr_fail_at(s, "bad record (NUL byte)");
    line[len] = '\0';
    /* The last slot takes the rest of the line: no record has that many
     * fields, so the field-count checks reject it. */
    for (char *t = line;;) {
        s->f[s->nf++] = t;
        if (s->nf == PR_MAX_FIELDS) break;
        char *tab = strchr(t, '\t');
        if (!tab) break;
        *tab = '\0';
        t = tab + 1;
    }
    return 0;
}

/* A short lower-case name that is safe to quote in a message. */
static int pr_is_word(const char *t)
{
    size_t n = strspn(t, "abcdefghijklmnopqrstuvwxyz_");
    return n > 0 && n <= 16 && t[n] == '\0';
}

static enum pr_phase pr_kind(const char *name, int *known)
{
    *known = 1;
    if (!strcmp(name, "stat")) return PR_STAT;
    if (!strcmp(name, "frame")) return PR_FRAME;
    if (!strcmp(name, "ctx")) return PR_CTX;
    if (!strcmp(name, "pair")) return PR_PAIR;
    if (!strcmp(name, "code") || !strcmp(name, "codeline")) return PR_CODE;
    *known = 0;
    return PR_HEADER;
}

int pr_record(pr_state *s)
{
    int known;
    if (s->nheader < PR_NHEADER) {
        if (strcmp(s->f[0], pr_header_keys[s->nheader]) != 0) {
            if (pr_is_word(s->f[0]))
                return pr_fail_at(s, "bad %s record (expected %s)", s->f[0],
                                  pr_header_keys[s->nheader]);
            return pr_fail_at(s, "bad record (expected %s)", pr_header_keys[s->nheader]);
        }
        if (pr_header(s) != 0) return -1;
        s->nheader++;
        return 0;
    }
    enum pr_phase k = pr_kind(s->f[0], &known);
    if (!known && pr_is_word(s->f[0]))
        return pr_fail_at(s, "bad %s record (unknown kind)", s->f[0]);
    if (!known) return pr_fail_at(s, "bad record (unknown kind)");
    if (k < s->phase) return pr_bad(s, "out of order");
    s->phase = k;
    switch (k) {
    case PR_STAT: return pr_stat(s);
    case PR_FRAME: return pr_frame(s);
    case PR_CTX: return pr_ctx(s);
    case PR_PAIR: return pr_pair(s);
    default: return strcmp(s->f[0], "code") ? pr_codeline(s) : pr_code(s);
    }
}

int pr_records_done(pr_state *s)
{
    if (s->nheader < PR_NHEADER)
        return pr_fail_at(s, "bad end record (no %s record before it)",
                          pr_header_keys[s->nheader]);
    return 0;
}

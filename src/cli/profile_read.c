/*
 * profile_read.c - loads one thread's profile from disk, trusting nothing.
 *
 * Owns the reader side of docs/profile-format.md. The file is read whole,
 * then checked from the outside in: magic and version first (so a foreign
 * file is named as such), then the `end` line and CRC-32 (so truncation and
 * corruption are told apart from malformed records), then every record in
 * order with all references checked. Any input yields either a complete
 * profile or a one-line message; nothing is ever half filled.
 */
#include "profile.h"

#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#define PR_MAX_FIELDS 9            /* one more than the widest record */
#define PR_MAX_SIZE (1ull << 30)   /* a profile beyond 1 GiB is surely not ours */

enum pr_phase { PR_HEADER, PR_STAT, PR_FRAME, PR_CTX, PR_PAIR, PR_CODE };

static const char *const pr_header_keys[] = {
    "mode", "sampler", "pid", "tid", "thread", "command", "interval", "fp_tolerance", "watch_check",
};
#define PR_NHEADER (sizeof pr_header_keys / sizeof pr_header_keys[0])

typedef struct pr_state {
    const char *path;
    char *err;
    size_t errlen;
    profile *p;
    unsigned long line;      /* 1-based number of the record being parsed */
    size_t nheader;          /* header records seen so far */
    enum pr_phase phase;
    size_t cap_stats, cap_frames, cap_contexts, cap_pairs, cap_codes;
    char *f[PR_MAX_FIELDS];  /* fields of the current record */
    size_t nf;
} pr_state;

static int pr_vfail(pr_state *s, int at_line, const char *fmt, va_list ap)
{
    int n = at_line ? snprintf(s->err, s->errlen, "%s:%lu: ", s->path, s->line)
                    : snprintf(s->err, s->errlen, "%s: ", s->path);
    if (n >= 0 && (size_t)n < s->errlen)
        vsnprintf(s->err + n, s->errlen - (size_t)n, fmt, ap);
    return -1;
}

/* "<path>: <what>", for problems with the file as a whole. */
static int pr_fail(pr_state *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pr_vfail(s, 0, fmt, ap);
    va_end(ap);
    return -1;
}

/* "<path>:<line>: <what>", for problems with the current record. */
static int pr_fail_at(pr_state *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pr_vfail(s, 1, fmt, ap);
    va_end(ap);
    return -1;
}

/* Only called once f[0] is known to be a record name of ours. */
static int pr_bad(pr_state *s, const char *detail)
{
    return pr_fail_at(s, "bad %s record (%s)", s->f[0], detail);
}

/* ---- scalar fields ---- */

static int pr_u64(const char *t, uint64_t *out)
{
    uint64_t v = 0;
    if (!*t) return -1;
    for (; *t; t++) {
        if (*t < '0' || *t > '9') return -1;
        unsigned d = (unsigned)(*t - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static int pr_u32(const char *t, uint32_t *out)
{
    uint64_t v;
    if (pr_u64(t, &v) != 0 || v > UINT32_MAX) return -1;
    *out = (uint32_t)v;
    return 0;
}

static int pr_i64(const char *t, int64_t *out)
{
    uint64_t v;
    int neg = *t == '-';
    if (pr_u64(t + neg, &v) != 0 || v > (uint64_t)INT64_MAX + neg) return -1;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

/* Value of the hex digit c, or -1; upper-case digits only when upper. */
static int pr_xdigit(char c, int upper)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (upper && c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int pr_hex64(const char *t, uint64_t *out)
{
    uint64_t v = 0;
    if (t[0] != '0' || (t[1] != 'x' && t[1] != 'X') || !t[2] || strlen(t + 2) > 16) return -1;
    for (t += 2; *t; t++) {
        int d = pr_xdigit(*t, 1);
        if (d < 0) return -1;
        v = v << 4 | (unsigned)d;
    }
    *out = v;
    return 0;
}

/* Parses a finite, non-negative double in the C locale whatever the
 * process locale is (the writer uses the C locale too). */
static int pr_double(const char *t, double *out)
{
    if (!((*t >= '0' && *t <= '9') || *t == '.')) return -1;
    locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    locale_t old = c ? uselocale(c) : (locale_t)0;
    char *end;
    errno = 0;
    double v = strtod(t, &end);
    int bad = *end != '\0' || !isfinite(v) || v < 0;
    if (c) {
        uselocale(old);
        freelocale(c);
    }
    if (bad) return -1;
    *out = v;
    return 0;
}

/* Returns a heap copy of t with the format's escapes undone, or NULL when
 * an escape is malformed or memory runs out (*oom tells which). */
static char *pr_str(const char *t, int *oom)
{
    char *r = malloc(strlen(t) + 1), *o = r;
    *oom = r == NULL;
    if (!r) return NULL;
    for (; *t; t++) {
        if (*t != '\\') { *o++ = *t; continue; }
        switch (*++t) {
        case '\\': *o++ = '\\'; break;
        case 't': *o++ = '\t'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        default: free(r); return NULL;
        }
    }
    *o = '\0';
    return r;
}

/* Unescapes field i into *dst; on failure sets the message. */
static int pr_field_str(pr_state *s, size_t i, char **dst, const char *what)
{
    int oom;
    *dst = pr_str(s->f[i], &oom);
    if (*dst) return 0;
    return oom ? pr_fail(s, "out of memory") : pr_bad(s, what);
}

/* Makes room for one more element of size elem in *arr. */
static int pr_grow(pr_state *s, void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap) return 0;
    size_t ncap = *cap ? *cap * 2 : 16;
    void *a = realloc(*arr, ncap * elem);
    if (!a) return pr_fail(s, "out of memory");
    *arr = a;
    *cap = ncap;
    return 0;
}

/* ---- records ---- */

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
            : !strcmp(t, "software") || !strcmp(t, "pmu");
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
    if (pr_grow(s, (void **)&p->stats, &s->cap_stats, p->nstats, sizeof *p->stats)) return -1;
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
                       size_t elem)
{
    char what[32];
    snprintf(what, sizeof what, "expected %zu fields", nfields);
    if (s->nf != nfields) {
        pr_bad(s, what);
        return NULL;
    }
    if (pr_id(s, *n) != 0 || pr_grow(s, arr, cap, *n, elem) != 0) return NULL;
    void *e = (char *)*arr + elem * (*n)++;
    memset(e, 0, elem);
    return e;
}

static int pr_frame(pr_state *s)
{
    profile *p = s->p;
    prof_frame *fr = pr_append(s, 8, (void **)&p->frames, &s->cap_frames, &p->nframes,
                               sizeof *p->frames);
    if (!fr) return -1;
    if (pr_field_str(s, 2, &fr->function, "bad escape in function") ||
        pr_field_str(s, 3, &fr->file, "bad escape in file") ||
        pr_field_str(s, 5, &fr->module, "bad escape in module") ||
        pr_field_str(s, 7, &fr->instruction, "bad escape in instruction"))
        return -1;
    if (pr_u32(s->f[4], &fr->line) != 0) return pr_bad(s, "line not an integer");
    if (pr_hex64(s->f[6], &fr->pc) != 0) return pr_bad(s, "pc not 0x-hex");
    return 0;
}

static int pr_ctx(pr_state *s)
{
    profile *p = s->p;
    prof_context *c = pr_append(s, 3, (void **)&p->contexts, &s->cap_contexts, &p->ncontexts,
                                sizeof *p->contexts);
    if (!c) return -1;
    size_t n = 1;
    for (const char *t = s->f[2]; *t; t++) n += *t == ',';
    if (n > UINT32_MAX) return pr_bad(s, "too many frames");
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
    if (pr_grow(s, (void **)&p->pairs, &s->cap_pairs, p->npairs, sizeof *p->pairs)) return -1;
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
                             sizeof *p->codes);
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

/* ---- whole file ---- */

/* Splits the record at line (length len, without its '\n') into s->f. */
static int pr_split(pr_state *s, char *line, size_t len)
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

static int pr_record(pr_state *s)
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

/* Checks the first line. Returns 0 when it is our magic and version. */
static int pr_magic(pr_state *s, const char *buf, size_t len)
{
    static const char magic[] = PROFILE_MAGIC "\t";
    size_t m = sizeof magic - 1;
    if (len < m || memcmp(buf, magic, m) != 0) return pr_fail(s, "not a wasp profile");
    size_t i = m;
    while (i < len && i - m < 20 && buf[i] >= '0' && buf[i] <= '9') i++;
    size_t ndigits = i - m;
    if (ndigits == 0 || (i < len && buf[i] != '\n')) return pr_fail(s, "not a wasp profile");
    if (i == len) return pr_fail(s, "truncated (no end record)");
    char ours[16];
    snprintf(ours, sizeof ours, "%d", PROFILE_VERSION);
    if (ndigits != strlen(ours) || memcmp(buf + m, ours, ndigits) != 0)
        return pr_fail(s, "unsupported profile version %.*s (this wasp reads %d)",
                       (int)ndigits, buf + m, PROFILE_VERSION);
    return 0;
}

/* Checks the `end` line; returns the length of the body before it, or
 * (size_t)-1 with the message set. *records gets its record count. */
static size_t pr_end(pr_state *s, const char *buf, size_t len, uint64_t *records)
{
    if (len == 0 || buf[len - 1] != '\n') {
        pr_fail(s, "truncated (no end record)");
        return (size_t)-1;
    }
    size_t start = len - 1;
    while (start > 0 && buf[start - 1] != '\n') start--;
    const char *e = buf + start;
    size_t elen = len - 1 - start, i = 4;
    while (i < elen && e[i] >= '0' && e[i] <= '9' && i < 4 + 20) i++;
    int ok = elen > 4 && memcmp(e, "end\t", 4) == 0 && i > 4 && i + 9 == elen && e[i] == '\t';
    for (size_t j = i + 1; ok && j < elen; j++)
        ok = (e[j] >= '0' && e[j] <= '9') || (e[j] >= 'a' && e[j] <= 'f');
    char num[32];
    if (ok) {
        memcpy(num, e + 4, i - 4);
        num[i - 4] = '\0';
        ok = pr_u64(num, records) == 0;
    }
    if (!ok) {
        pr_fail(s, "truncated (no end record)");
        return (size_t)-1;
    }
    if (strtoul(e + i + 1, NULL, 16) != profile_crc(buf, start)) {
        pr_fail(s, "checksum mismatch");
        return (size_t)-1;
    }
    return start;
}

/* Reads the whole of path into a NUL-terminated heap buffer. */
static char *pr_slurp(pr_state *s, size_t *len)
{
    FILE *f = fopen(s->path, "rb");
    struct stat st;
    if (!f || fstat(fileno(f), &st) != 0) {
        pr_fail(s, "%s", strerror(errno));
        if (f) fclose(f);
        return NULL;
    }
    /* Refusing devices and fifos keeps /dev/zero from eating all memory. */
    if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > PR_MAX_SIZE) {
        pr_fail(s, S_ISREG(st.st_mode) ? "not a wasp profile (too large)"
                                       : "not a regular file");
        fclose(f);
        return NULL;
    }
    size_t cap = (size_t)st.st_size + 2, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1) break;
        char *nb = cap >= PR_MAX_SIZE ? NULL : realloc(buf, cap * 2);
        if (!nb) { free(buf); buf = NULL; errno = cap >= PR_MAX_SIZE ? EFBIG : ENOMEM; break; }
        buf = nb;
        cap *= 2;
    }
    int err = buf ? (ferror(f) ? (errno ? errno : EIO) : 0) : errno;
    fclose(f);
    if (err) {
        free(buf);
        pr_fail(s, "%s", strerror(err));
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

static int pr_parse(pr_state *s, char *buf, size_t len)
{
    uint64_t records;
    if (pr_magic(s, buf, len) != 0) return -1;
    size_t body = pr_end(s, buf, len, &records);
    if (body == (size_t)-1) return -1;
    s->line = 1;
    char *line = memchr(buf, '\n', body) + 1;   /* past the magic line */
    while (line < buf + body) {
        char *nl = memchr(line, '\n', (size_t)(buf + body - line));
        s->line++;
        if (pr_split(s, line, (size_t)(nl - line)) != 0 || pr_record(s) != 0) return -1;
        line = nl + 1;
    }
    s->line++;
    if (s->nheader < PR_NHEADER)
        return pr_fail_at(s, "bad end record (no %s record before it)",
                          pr_header_keys[s->nheader]);
    if (records != s->line - 1)
        return pr_fail_at(s, "bad end record (counts %" PRIu64 " records, file has %lu)",
                          records, s->line - 1);
    return 0;
}

int profile_read(const char *path, profile *p, char *err, size_t errlen)
{
    char dummy[1];
    pr_state s = { .path = path, .err = err && errlen ? err : dummy,
                   .errlen = err && errlen ? errlen : sizeof dummy, .p = p };
    memset(p, 0, sizeof *p);
    size_t len;
    char *buf = pr_slurp(&s, &len);
    if (!buf) return -1;
    int rc = pr_parse(&s, buf, len);
    free(buf);
    if (rc != 0) profile_free(p);
    return rc;
}

void profile_free(profile *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->nstats; i++) free(p->stats[i].name);
    for (size_t i = 0; i < p->nframes; i++) {
        free(p->frames[i].function);
        free(p->frames[i].file);
        free(p->frames[i].module);
        free(p->frames[i].instruction);
    }
    for (size_t i = 0; i < p->ncontexts; i++) free(p->contexts[i].frames);
    for (size_t i = 0; i < p->ncodes; i++) prof_code_clear(&p->codes[i]);
    free(p->codes);
    free(p->stats);
    free(p->frames);
    free(p->contexts);
    free(p->pairs);
    free(p->thread_name);
    free(p->command);
    memset(p, 0, sizeof *p);
}

uint64_t profile_stat(const profile *p, const char *name)
{
    for (size_t i = 0; i < p->nstats; i++)
        if (p->stats[i].name && !strcmp(p->stats[i].name, name)) return p->stats[i].value;
    return 0;
}

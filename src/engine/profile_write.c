/*
 * profile_write.c - serializes one thread's profile to disk.
 *
 * Owns the writer side of docs/profile-format.md: escaping of string fields,
 * record order, the closing `end` line with its CRC-32, and the atomic
 * publish (temporary file in the same directory, then rename) that lets a
 * reader assume it never sees half a file (publish.c, with write(2), never
 * through a stdio buffer a fork would copy). Codes are written by increasing
 * start whatever their order in memory. The whole body is first built in
 * memory so the checksum and record count are known before anything touches
 * the disk.
 * Not signal-safe: it allocates and uses stdio (open_memstream).
 */
#include "profile.h"
#include "publish.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* A memory stream that counts the records (lines) written to it. */
typedef struct pw_out {
    FILE *f;
    char *buf;
    size_t len;
    uint64_t records;
} pw_out;

static void pw_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    if (!err || errlen == 0) return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Writes TAB then s with \, TAB, LF and CR escaped; NULL is written as "". */
static void pw_field(pw_out *o, const char *s)
{
    fputc('\t', o->f);
    for (; s && *s; s++) {
        switch (*s) {
        case '\\': fputs("\\\\", o->f); break;
        case '\t': fputs("\\t", o->f); break;
        case '\n': fputs("\\n", o->f); break;
        case '\r': fputs("\\r", o->f); break;
        default: fputc(*s, o->f);
        }
    }
}

static void pw_line_str(pw_out *o, const char *name, const char *value)
{
    fputs(name, o->f);
    pw_field(o, value);
    fputc('\n', o->f);
    o->records++;
}

static void pw_line_fmt(pw_out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(o->f, fmt, ap);
    va_end(ap);
    fputc('\n', o->f);
    o->records++;
}

/* Refuses profiles whose references a reader would reject, so an engine bug
 * shows up at write time with a precise message instead of as a damaged
 * file later. */
static int pw_validate(const profile *p, char *err, size_t errlen)
{
    for (size_t i = 0; i < p->ncontexts; i++) {
        const prof_context *c = &p->contexts[i];
        if (c->nframes == 0) {
            pw_err(err, errlen, "profile_write: context %zu has no frames", i);
            return -1;
        }
        for (uint32_t j = 0; j < c->nframes; j++) {
            if (c->frames[j] >= p->nframes) {
                pw_err(err, errlen, "profile_write: context %zu refers to frame %" PRIu32
                       " of %zu", i, c->frames[j], p->nframes);
                return -1;
            }
        }
    }
    for (size_t i = 0; i < p->npairs; i++) {
        const prof_pair *q = &p->pairs[i];
        if (q->watch_ctx >= p->ncontexts || q->trap_ctx >= p->ncontexts) {
            pw_err(err, errlen, "profile_write: pair %zu refers to a context beyond %zu",
                   i, p->ncontexts);
            return -1;
        }
    }
    return 0;
}

/* A code the reader would accept, overlaps aside (pw_code_order). */
static int pw_validate_code(const prof_code *c, size_t i, char *err, size_t errlen)
{
    if (c->size == 0 || c->size > PROFILE_CODE_MAX_SIZE || !c->bytes) {
        pw_err(err, errlen, "profile_write: code %zu has %" PRIu32 " bytes (1 to %u)", i,
               c->size, PROFILE_CODE_MAX_SIZE);
        return -1;
    }
    if (c->start > UINT64_MAX - (c->size - 1)) {
        pw_err(err, errlen, "profile_write: code %zu wraps past the top of memory", i);
        return -1;
    }
    if (c->nlines && !c->lines) {
        pw_err(err, errlen, "profile_write: code %zu has no line table", i);
        return -1;
    }
    for (uint32_t j = 0; j < c->nlines; j++) {
        if (c->lines[j].offset >= c->size || (j && c->lines[j].offset <= c->lines[j - 1].offset)) {
            pw_err(err, errlen, "profile_write: code %zu line %" PRIu32 " at offset %" PRIu32
                   " (offsets must increase and stay below %" PRIu32 ")", i, j,
                   c->lines[j].offset, c->size);
            return -1;
        }
    }
    return 0;
}

static int pw_code_cmp(const void *a, const void *b, void *arg)
{
    const prof_code *codes = arg;
    uint64_t x = codes[*(const size_t *)a].start, y = codes[*(const size_t *)b].start;
    return (x > y) - (x < y);
}

/* Codes go to the file by increasing start, as the format wants; returns
 * that order (malloc'd), or NULL with the message set (overlap, bad code,
 * out of memory). Not called without codes. */
static size_t *pw_code_order(const profile *p, char *err, size_t errlen)
{
    size_t *order = malloc(p->ncodes * sizeof *order);
    if (!order) {
        pw_err(err, errlen, "profile_write: out of memory");
        return NULL;
    }
    for (size_t i = 0; i < p->ncodes; i++) {
        order[i] = i;
        if (pw_validate_code(&p->codes[i], i, err, errlen) != 0) {
            free(order);
            return NULL;
        }
    }
    qsort_r(order, p->ncodes, sizeof *order, pw_code_cmp, p->codes);
    for (size_t i = 1; i < p->ncodes; i++) {
        const prof_code *a = &p->codes[order[i - 1]], *b = &p->codes[order[i]];
        if (b->start - a->start < a->size) {
            pw_err(err, errlen, "profile_write: codes %zu and %zu overlap", order[i - 1],
                   order[i]);
            free(order);
            return NULL;
        }
    }
    return order;
}

static void pw_header(pw_out *o, const profile *p)
{
    pw_line_fmt(o, "%s\t%d", PROFILE_MAGIC, PROFILE_VERSION);
    pw_line_str(o, "mode", p->mode);
    pw_line_str(o, "sampler", p->sampler);
    pw_line_fmt(o, "pid\t%" PRId64, p->pid);
    pw_line_fmt(o, "tid\t%" PRId64, p->tid);
    pw_line_str(o, "thread", p->thread_name);
    pw_line_str(o, "command", p->command);
    pw_line_fmt(o, "interval\t%" PRIu64, p->interval);
    /* %.17g round-trips every double exactly. The profiled program may have
     * called setlocale() with a ',' decimal point, so format in the C locale
     * (uselocale is per thread, hence safe while other threads run). */
    locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    locale_t old = c ? uselocale(c) : (locale_t)0;
    pw_line_fmt(o, "fp_tolerance\t%.17g", p->fp_tolerance);
    if (c) {
        uselocale(old);
        freelocale(c);
    }
    pw_line_str(o, "watch_check", p->watch_check[0] ? p->watch_check : "unchecked");
}

static void pw_body(pw_out *o, const profile *p)
{
    for (size_t i = 0; i < p->nstats; i++) {
        fputs("stat", o->f);
        pw_field(o, p->stats[i].name);
        pw_line_fmt(o, "\t%" PRIu64, p->stats[i].value);
    }
    for (size_t i = 0; i < p->nframes; i++) {
        const prof_frame *fr = &p->frames[i];
        fprintf(o->f, "frame\t%zu", i);
        pw_field(o, fr->function);
        pw_field(o, fr->file);
        fprintf(o->f, "\t%" PRIu32, fr->line);
        pw_field(o, fr->module);
        fprintf(o->f, "\t0x%" PRIx64, fr->pc);
        pw_field(o, fr->instruction);
        pw_line_fmt(o, "%s", "");
    }
    for (size_t i = 0; i < p->ncontexts; i++) {
        const prof_context *c = &p->contexts[i];
        fprintf(o->f, "ctx\t%zu\t", i);
        for (uint32_t j = 0; j < c->nframes; j++)
            fprintf(o->f, j ? ",%" PRIu32 : "%" PRIu32, c->frames[j]);
        pw_line_fmt(o, "%s", "");
    }
    for (size_t i = 0; i < p->npairs; i++) {
        const prof_pair *q = &p->pairs[i];
        pw_line_fmt(o, "pair\t%" PRIu32 "\t%" PRIu32 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64
                    "\t%" PRIu64, q->watch_ctx, q->trap_ctx, q->count, q->bytes,
                    q->wasteful_bytes, q->approx_bytes);
    }
}

/* Each code, then its lines; ids follow the order (by start). */
static void pw_codes(pw_out *o, const profile *p, const size_t *order)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < p->ncodes; i++) {
        const prof_code *c = &p->codes[order[i]];
        fprintf(o->f, "code\t%zu", i);
        pw_field(o, c->name);
        fprintf(o->f, "\t0x%" PRIx64 "\t", c->start);
        for (uint32_t k = 0; k < c->size; k++) {
            fputc(hex[c->bytes[k] >> 4], o->f);
            fputc(hex[c->bytes[k] & 15], o->f);
        }
        pw_line_fmt(o, "%s", "");
        for (uint32_t j = 0; j < c->nlines; j++) {
            const prof_code_line *l = &c->lines[j];
            fprintf(o->f, "codeline\t%zu\t%" PRIu32 "\t%" PRIu32, i, l->offset, l->line);
            pw_field(o, l->function);
            pw_field(o, l->file);
            pw_line_fmt(o, "%s", "");
        }
    }
}

void prof_code_clear(prof_code *c)
{
    for (uint32_t j = 0; c->lines && j < c->nlines; j++) {
        free(c->lines[j].function);
        free(c->lines[j].file);
    }
    free(c->lines);
    free(c->name);
    free(c->bytes);
    memset(c, 0, sizeof *c);
}

/* zlib's crc32 takes a uInt length; feed it in chunks. */
unsigned long profile_crc(const char *buf, size_t len)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    while (len > 0) {
        uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;
        crc = crc32(crc, (const Bytef *)buf, n);
        buf += n;
        len -= n;
    }
    return crc;
}

/* Publishes buf as path: its directory is opened without following a
 * link (a symlink planted as DIR/<pid> is refused, never written through),
 * and the file is created 0600 under a fresh name, then renamed. */
static int pw_publish(const char *path, const char *buf, size_t len, char *err, size_t errlen)
{
    char name[256];
    int dirfd = publish_open_parent(path, 1, name, sizeof name);
    if (dirfd < 0) {
        pw_err(err, errlen, "%s: %s%s", path, strerror(errno),
               errno == ELOOP || errno == ENOTDIR ? " (its directory is a symbolic link)" : "");
        return -1;
    }
    int rc = publish_buffer(dirfd, name, buf, len, PUBLISH_FILE_MODE);
    if (rc != 0) {
        int saved = errno;
        pw_err(err, errlen, "%s: %s — %s", path, strerror(saved),
               saved == ENOSPC || saved == EDQUOT ? "free space on that disk or give another -o DIR"
                                                  : "check that -o DIR can be written");
        errno = saved;   /* the engine records why in the manifest */
    }
    close(dirfd);
    return rc;
}

int profile_write(const profile *p, const char *path, char *err, size_t errlen)
{
    if (pw_validate(p, err, errlen) != 0) return -1;
    size_t *order = NULL;
    if (p->ncodes && (order = pw_code_order(p, err, errlen)) == NULL) return -1;
    pw_out o = { 0 };
    o.f = open_memstream(&o.buf, &o.len);
    if (!o.f) {
        pw_err(err, errlen, "%s: %s", path, strerror(errno));
        free(order);
        return -1;
    }
    pw_header(&o, p);
    pw_body(&o, p);
    if (order) pw_codes(&o, p, order);
    free(order);
    int bad = ferror(o.f);
    if (fclose(o.f) != 0) bad = 1;
    if (bad || !o.buf) {
        pw_err(err, errlen, "%s: out of memory", path);
        free(o.buf);
        return -1;
    }
    unsigned long crc = profile_crc(o.buf, o.len);
    char end[64];
    int n = snprintf(end, sizeof end, "end\t%" PRIu64 "\t%08lx\n", o.records, crc);
    char *all = realloc(o.buf, o.len + (size_t)n + 1);
    if (!all) {
        pw_err(err, errlen, "%s: out of memory", path);
        free(o.buf);
        return -1;
    }
    memcpy(all + o.len, end, (size_t)n + 1);
    int rc = pw_publish(path, all, o.len + (size_t)n, err, errlen);
    free(all);
    return rc;
}

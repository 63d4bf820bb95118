/*
 * profile_write.c - serializes one thread's profile to disk.
 *
 * Owns the writer side of docs/profile-format.md: escaping of string fields,
 * record order, the closing `end` line with its CRC-32, and the atomic
 * publish (temporary file in the same directory, then rename) that lets a
 * reader assume it never sees half a file. The whole body is first built in
 * memory so the checksum and record count are known before anything touches
 * the disk. Not signal-safe: it allocates and uses stdio.
 */
#include "profile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
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

/* zlib's crc32 takes a uInt length; feed it in chunks. */
static unsigned long pw_crc(const char *buf, size_t len)
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

/* Writes buf to a fresh temporary file next to path and renames it over
 * path. The temp name carries pid and tid so concurrent writers in one
 * process or in forked children never share it. */
static int pw_publish(const char *path, const char *buf, size_t len, char *err, size_t errlen)
{
    size_t tmplen = strlen(path) + 64;
    char *tmp = malloc(tmplen);
    if (!tmp) {
        pw_err(err, errlen, "%s: out of memory", path);
        return -1;
    }
    snprintf(tmp, tmplen, "%s.tmp.%ld.%ld", path, (long)getpid(), (long)syscall(SYS_gettid));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        pw_err(err, errlen, "%s: %s", tmp, strerror(errno));
        if (fd >= 0) { close(fd); unlink(tmp); }
        free(tmp);
        return -1;
    }
    size_t n = fwrite(buf, 1, len, f);
    int bad = n != len || fflush(f) != 0 || ferror(f);
    int saved = errno;
    if (fclose(f) != 0 && !bad) { bad = 1; saved = errno; }
    if (!bad && rename(tmp, path) != 0) { bad = 1; saved = errno; }
    if (bad) {
        pw_err(err, errlen, "%s: %s", path, strerror(saved ? saved : EIO));
        unlink(tmp);
    }
    free(tmp);
    return bad ? -1 : 0;
}

int profile_write(const profile *p, const char *path, char *err, size_t errlen)
{
    if (pw_validate(p, err, errlen) != 0) return -1;
    pw_out o = { 0 };
    o.f = open_memstream(&o.buf, &o.len);
    if (!o.f) {
        pw_err(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    pw_header(&o, p);
    pw_body(&o, p);
    int bad = ferror(o.f);
    if (fclose(o.f) != 0) bad = 1;
    if (bad || !o.buf) {
        pw_err(err, errlen, "%s: out of memory", path);
        free(o.buf);
        return -1;
    }
    unsigned long crc = pw_crc(o.buf, o.len);
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

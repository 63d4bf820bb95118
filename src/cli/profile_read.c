/*
 * profile_read.c - loads one thread's profile from disk, trusting nothing.
 *
 * Owns the file side of docs/profile-format.md. Only a regular file is
 * read (opened O_NONBLOCK, so a FIFO cannot hang the reader, then checked
 * with fstat), and it is streamed twice, one bounded line at a time, so
 * memory is the parsed profile plus one line, never the file itself: the
 * first pass checks it from the outside in (magic and version, so a
 * foreign file is named as such; then the `end` line and CRC-32, so
 * truncation and corruption are told apart from malformed records), the
 * second parses every record (profile_records.c). Any input yields either
 * a complete profile or a one-line message; nothing is ever half filled.
 * Profiles are published by rename and never rewritten in place, so both
 * passes read the same bytes through one descriptor.
 */
#include "profile_read_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define PR_CHUNK (64u << 10)     /* the most read at once; buffers start at 4 KiB */

/* Bounded line reader over a stream: a line is handed out in place,
 * writable, with one spare byte after it for a NUL. */
typedef struct pr_lines {
    FILE *f;
    char *buf;
    size_t cap, start, scan, end;   /* pending bytes [start, end); no '\n' in [start, scan) */
    uint64_t total;                 /* bytes read so far */
    int eof;
} pr_lines;

/* More bytes into the buffer, growing it up to one maximal line. 0, or -1
 * with the message set. */
static int pr_fill(pr_state *s, pr_lines *r)
{
    if (r->start) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->scan -= r->start;
        r->start = 0;
    }
    if (r->cap - r->end < r->cap / 2 + 1) {
        size_t ncap = r->cap ? r->cap * 2 : 4096;
        if (ncap > PR_MAX_LINE + 2 * PR_CHUNK) ncap = PR_MAX_LINE + 2 * PR_CHUNK;
        char *b = ncap > r->cap ? realloc(r->buf, ncap) : NULL;
        if (ncap > r->cap && !b) return pr_fail(s, "out of memory");
        if (b) {
            r->buf = b;
            r->cap = ncap;
        }
    }
    size_t want = r->cap - r->end - 1;
    size_t n = fread(r->buf + r->end, 1, want < PR_CHUNK ? want : PR_CHUNK, r->f);
    r->end += n;
    r->total += n;
    if (r->total > PR_MAX_SIZE) return pr_fail(s, "not a wasp profile (too large)");
    if (n == 0) {
        if (ferror(r->f)) return pr_fail(s, "%s", strerror(errno ? errno : EIO));
        r->eof = 1;
    }
    return 0;
}

/* The next line (without its '\n', *nl telling whether it had one): 1,
 * 0 at the end of the file, or -1 with the message set (a line longer
 * than any record, a read error). */
static int pr_next(pr_state *s, pr_lines *r, char **line, size_t *len, int *nl)
{
    if (!r->buf && pr_fill(s, r) != 0) return -1;
    for (;;) {
        char *p = memchr(r->buf + r->scan, '\n', r->end - r->scan);
        if (p || (r->eof && r->end > r->start)) {
            *line = r->buf + r->start;
            *len = (size_t)((p ? p : r->buf + r->end) - *line);
            *nl = p != NULL;
            r->start += *len + (size_t)*nl;
            r->scan = r->start;
            return 1;
        }
        if (r->eof) return 0;
        r->scan = r->end;
        if (r->end - r->start > PR_MAX_LINE)
            return pr_fail(s, "line %lu is longer than %zu bytes, longer than any record",
                           s->line + 1, PR_MAX_LINE);
        if (pr_fill(s, r) != 0) return -1;
    }
}

/* Checks the first line. Returns 0 when it is our magic and version. */
static int pr_magic(pr_state *s, const char *line, size_t len, int nl)
{
    static const char magic[] = PROFILE_MAGIC "\t";
    size_t m = sizeof magic - 1, i = m;
    if (len < m || memcmp(line, magic, m) != 0) return pr_fail(s, "not a wasp profile");
    while (i < len && i - m < 20 && line[i] >= '0' && line[i] <= '9') i++;
    size_t ndigits = i - m;
    if (ndigits == 0 || i != len) return pr_fail(s, "not a wasp profile");
    if (!nl) return pr_fail(s, "truncated (no end record)");
    char ours[16];
    snprintf(ours, sizeof ours, "%d", PROFILE_VERSION);
    if (ndigits != strlen(ours) || memcmp(line + m, ours, ndigits) != 0)
        return pr_fail(s, "unsupported profile version %.*s (this wasp reads %d)",
                       (int)ndigits, line + m, PROFILE_VERSION);
    return 0;
}

/* The `end` line: "end\t<records>\t<8 hex digits>". 0, or -1 when it is
 * not one. */
static int pr_end_line(const char *e, size_t elen, uint64_t *records, uint64_t *crc)
{
    size_t i = 4;
    while (i < elen && e[i] >= '0' && e[i] <= '9' && i < 4 + 20) i++;
    int ok = elen > 4 && memcmp(e, "end\t", 4) == 0 && i > 4 && i + 9 == elen && e[i] == '\t';
    *crc = 0;
    for (size_t j = i + 1; ok && j < elen; j++) {
        int d = pr_xdigit(e[j], 0);
        ok = d >= 0;
        *crc = *crc << 4 | (uint64_t)(d < 0 ? 0 : d);
    }
    char num[32];
    if (!ok) return -1;
    memcpy(num, e + 4, i - 4);
    num[i - 4] = '\0';
    return pr_u64(num, records);
}

/* First pass: magic, line count and length caps, the end line and the
 * CRC-32 of everything before it. *lines gets the number of lines. */
static int pr_verify(pr_state *s, FILE *f, uint64_t *lines)
{
    pr_lines r = { .f = f };
    char *line, last[64];
    size_t len, lastlen = 0;
    int nl = 0, rc;
    uLong crc = crc32(0L, Z_NULL, 0), before_last = crc;
    *lines = 0;
    while ((rc = pr_next(s, &r, &line, &len, &nl)) == 1) {
        if (++*lines == 1 && pr_magic(s, line, len, nl) != 0) break;
        if (*lines > (uint64_t)PR_MAX_RECORDS + 1) {
            rc = pr_fail(s, "more than %u records, more than wasp writes", PR_MAX_RECORDS);
            break;
        }
        before_last = crc;
        crc = crc32(crc, (const Bytef *)line, (uInt)(len + (size_t)nl));
        lastlen = len < sizeof last ? len : sizeof last;
        memcpy(last, line, lastlen);
        s->line = (unsigned long)*lines;
    }
    free(r.buf);
    if (rc != 0) return -1;
    if (*lines == 0) return pr_fail(s, "not a wasp profile");
    uint64_t crc_said;
    if (*lines < 2 || !nl || pr_end_line(last, lastlen, &s->p->records, &crc_said) != 0)
        return pr_fail(s, "truncated (no end record)");
    if (crc_said != before_last) return pr_fail(s, "checksum mismatch");
    s->p->crc = crc_said;
    return 0;
}

/* Second pass: every record between the magic and the end line. */
static int pr_parse(pr_state *s, FILE *f, uint64_t lines)
{
    pr_lines r = { .f = f };
    char *line;
    size_t len;
    int nl, rc = 0;
    if (fseek(f, 0, SEEK_SET) != 0) return pr_fail(s, "%s", strerror(errno));
    s->line = 0;
    while (rc == 0 && s->line + 1 < lines && (rc = pr_next(s, &r, &line, &len, &nl)) == 1) {
        rc = 0;
        if (++s->line == 1) continue;
        rc = pr_split(s, line, len) != 0 || pr_record(s) != 0 ? -1 : 0;
    }
    free(r.buf);
    if (rc != 0) return -1;
    s->line = (unsigned long)lines;
    if (pr_records_done(s) != 0) return -1;
    if (s->p->records != lines - 1)
        return pr_fail_at(s, "bad end record (counts %" PRIu64 " records, file has %" PRIu64 ")",
                          s->p->records, lines - 1);
    return 0;
}

int profile_read_stream(FILE *f, const char *path, profile *p, char *err, size_t errlen)
{
    char dummy[1];
    pr_state s = { .path = path, .err = err && errlen ? err : dummy,
                   .errlen = err && errlen ? errlen : sizeof dummy, .p = p };
    uint64_t lines;
    memset(p, 0, sizeof *p);
    int rc = pr_verify(&s, f, &lines) == 0 && pr_parse(&s, f, lines) == 0 ? 0 : -1;
    if (rc != 0) profile_free(p);
    return rc;
}

/* fd, opened O_NONBLOCK: refused unless a regular file of a sane size. */
static int profile_read_fd(int fd, const char *path, profile *p, char *err, size_t errlen)
{
    struct stat st;
    const char *why = NULL;
    memset(p, 0, sizeof *p);
    if (fd < 0) why = errno == ELOOP ? "a symbolic link (not followed)" : strerror(errno);
    else if (fstat(fd, &st) != 0) why = strerror(errno);
    /* Refusing devices and FIFOs keeps /dev/zero from eating all memory
     * and a FIFO without a writer from hanging the report. */
    else if (!S_ISREG(st.st_mode)) why = "not a regular file";
    else if ((uint64_t)st.st_size > PR_MAX_SIZE) why = "not a wasp profile (too large)";
    FILE *f = why ? NULL : fdopen(fd, "rb");
    if (!why && !f) why = strerror(errno);
    if (why) {
        if (err && errlen) snprintf(err, errlen, "%s: %s", path, why);
        if (fd >= 0) close(fd);
        return -1;
    }
    int rc = profile_read_stream(f, path, p, err, errlen);
    fclose(f);
    return rc;
}

int profile_read(const char *path, profile *p, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    return profile_read_fd(fd, path, p, err, errlen);
}

int profile_read_at(int dirfd, const char *name, const char *path, profile *p, char *err,
                    size_t errlen)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
    return profile_read_fd(fd, path, p, err, errlen);
}

void profile_free(profile *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->nstats; i++) free(p->stats[i].name);
    /* A frame's strings are one block, starting at its function. */
    for (size_t i = 0; i < p->nframes; i++) free(p->frames[i].function);
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

int profile_is_ended(const profile *p)
{
    return p->tid == PROFILE_ENDED_TID && profile_stat(p, "threads_folded") > 0;
}

uint64_t profile_threads(const profile *p)
{
    return profile_is_ended(p) ? profile_stat(p, "threads_folded") : 1;
}

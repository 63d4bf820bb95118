/*
 * profile_fields.c - the reader's scalar fields, escapes and messages.
 *
 * Integers go through the one parser (num.c); doubles through strtod in
 * the C locale, digits first, finite only. Every failure becomes one
 * message naming the file, and the line when a record is at fault.
 */
#include "profile_read_internal.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "num.h"

static int pr_vfail(pr_state *s, int at_line, const char *fmt, va_list ap)
{
    int n = at_line ? snprintf(s->err, s->errlen, "%s:%lu: ", s->path, s->line)
                    : snprintf(s->err, s->errlen, "%s: ", s->path);
    if (n >= 0 && (size_t)n < s->errlen)
        vsnprintf(s->err + n, s->errlen - (size_t)n, fmt, ap);
    return -1;
}

/* "<path>: <what>", for problems with the file as a whole. */
int pr_fail(pr_state *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pr_vfail(s, 0, fmt, ap);
    va_end(ap);
    return -1;
}

/* "<path>:<line>: <what>", for problems with the current record. */
int pr_fail_at(pr_state *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pr_vfail(s, 1, fmt, ap);
    va_end(ap);
    return -1;
}

/* Only called once f[0] is known to be a record name of ours. */
int pr_bad(pr_state *s, const char *detail)
{
    return pr_fail_at(s, "bad %s record (%s)", s->f[0], detail);
}


/* ---- scalar fields ---- */

int pr_u64(const char *t, uint64_t *out)
{
    return num_parse_u64(t, out) == NUM_OK ? 0 : -1;
}

int pr_u32(const char *t, uint32_t *out)
{
    uint64_t v;
    if (pr_u64(t, &v) != 0 || v > UINT32_MAX) return -1;
    *out = (uint32_t)v;
    return 0;
}

int pr_i64(const char *t, int64_t *out)
{
    uint64_t v;
    int neg = *t == '-';
    if (pr_u64(t + neg, &v) != 0 || v > (uint64_t)INT64_MAX + neg) return -1;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

/* Value of the hex digit c, or -1; upper-case digits only when upper. */
int pr_xdigit(char c, int upper)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (upper && c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int pr_hex64(const char *t, uint64_t *out)
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
int pr_double(const char *t, double *out)
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

/* Writes t with the format's escapes undone to o (room for strlen(t) + 1
 * bytes); returns the byte after its NUL, or NULL for a bad escape. */
static char *pr_unescape(const char *t, char *o)
{
    for (; *t; t++) {
        if (*t != '\\') { *o++ = *t; continue; }
        switch (*++t) {
        case '\\': *o++ = '\\'; break;
        case 't': *o++ = '\t'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        default: return NULL;
        }
    }
    *o = '\0';
    return o + 1;
}

/* Unescapes field i into *dst; on failure sets the message. */
int pr_field_str(pr_state *s, size_t i, char **dst, const char *what)
{
    *dst = malloc(strlen(s->f[i]) + 1);
    if (!*dst) return pr_fail(s, "out of memory");
    if (pr_unescape(s->f[i], *dst)) return 0;
    free(*dst);
    *dst = NULL;
    return pr_bad(s, what);
}

int pr_fields_packed(pr_state *s, const size_t *idx, char **const *dst, size_t n,
                     const char *const *what)
{
    size_t len = 0;
    for (size_t k = 0; k < n; k++) len += strlen(s->f[idx[k]]) + 1;
    char *block = malloc(len), *o = block;
    if (!block) return pr_fail(s, "out of memory");
    for (size_t k = 0; k < n; k++) {
        *dst[k] = o;
        if (!(o = pr_unescape(s->f[idx[k]], o))) {
            free(block);
            for (size_t j = 0; j < n; j++) *dst[j] = NULL;
            return pr_bad(s, what[k]);
        }
    }
    return 0;
}

/* Makes room for one more element of size elem in *arr. */
int pr_grow(pr_state *s, void **arr, size_t *cap, size_t n, size_t elem, size_t limit,
            const char *what)
{
    if (n >= limit) return pr_fail_at(s, "more than %zu %s records, more than wasp writes", limit, what);
    if (n < *cap) return 0;
    size_t ncap = *cap ? *cap * 2 : 16;
    if (ncap > limit) ncap = limit;
    void *a = realloc(*arr, ncap * elem);
    if (!a) return pr_fail(s, "out of memory");
    *arr = a;
    *cap = ncap;
    return 0;
}

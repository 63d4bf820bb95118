/*
 * json_escape.c - the one JSON string escaper of the report writers
 * (out_json.c, out_html.c, out_html_code.c), and its UTF-8 rules, which
 * out_pprof.c shares.
 */
#include "json_escape.h"

#include <locale.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t json_utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n;
    uint32_t cp, min;
    if (c >= 0xc2 && c <= 0xdf) { n = 2; cp = c & 0x1f; min = 0x80; }
    else if (c >= 0xe0 && c <= 0xef) { n = 3; cp = c & 0x0f; min = 0x800; }
    else if (c >= 0xf0 && c <= 0xf4) { n = 4; cp = c & 0x07; min = 0x10000; }
    else return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;    /* also stops at the NUL */
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n;
}

int json_utf8_valid(const char *str)
{
    for (const unsigned char *s = (const unsigned char *)str; *s;) {
        size_t n = *s < 0x80 ? 1 : json_utf8_len(s);
        if (n == 0) return 0;
        s += n;
    }
    return 1;
}

char *json_utf8_dup(const char *str)
{
    char *out = malloc(3 * strlen(str) + 1), *o = out;
    for (const unsigned char *s = (const unsigned char *)str; out && *s;) {
        size_t n = *s < 0x80 ? 1 : json_utf8_len(s);
        memcpy(o, n ? (const char *)s : "\xef\xbf\xbd", n ? n : 3);
        o += n ? n : 3;
        s += n ? n : 1;
    }
    if (out) *o = '\0';
    return out;
}

void json_escape_str(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    fputc('"', f);
    while (*s) {
        size_t n;
        if (*s == '"' || *s == '\\') {
            fputc('\\', f);
            fputc(*s++, f);
        } else if (*s < 0x20 || *s == '<' || *s == '>' || *s == '&' || *s == 0x7f) {
            fprintf(f, "\\u%04x", *s++);
        } else if (*s < 0x80) {
            fputc(*s++, f);
        } else if ((n = json_utf8_len(s)) == 0) {
            fputs("\\ufffd", f);
            s++;
        } else if (n == 3 && s[0] == 0xe2 && s[1] == 0x80 && (s[2] == 0xa8 || s[2] == 0xa9)) {
            fprintf(f, "\\u%04x", s[2] == 0xa8 ? 0x2028 : 0x2029);
            s += 3;
        } else {
            fwrite(s, 1, n, f);
            s += n;
        }
    }
    fputc('"', f);
}

/* Shortest %g form that reads back as the same double, in the C locale
 * (a ',' decimal point would not be JSON). */
void json_num(FILE *f, double v)
{
    char buf[40];
    if (!isfinite(v)) v = 0;
    locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    locale_t old = c ? uselocale(c) : (locale_t)0;
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    if (c) {
        uselocale(old);
        freelocale(c);
    }
    fputs(buf, f);
}

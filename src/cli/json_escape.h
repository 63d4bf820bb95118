/*
 * json_escape.h - JSON strings that are safe wherever a report puts them.
 */
#ifndef WASP_JSON_ESCAPE_H
#define WASP_JSON_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* Writes s (NULL as "") as a JSON string, quotes included. '"' and '\' are
 * escaped; control characters, DEL, '<', '>' and '&' become \u escapes (so
 * the text can sit inside an HTML <script> element: no "</script>", no
 * "<!--"); U+2028 and U+2029 too (so it is valid JavaScript); bytes that
 * are not valid UTF-8 become U+FFFD, so the output is always valid UTF-8. */
void json_escape_str(FILE *f, const char *s);

/* A double as JSON: the shortest %g form that reads back as the same value,
 * in the C locale; NaN and infinities (not JSON) as 0. */
void json_num(FILE *f, double v);

/* Length of the valid UTF-8 sequence of two or more bytes at s, or 0 when
 * there is none (ASCII, overlong forms, surrogates, code points past
 * U+10FFFF, a truncated sequence). */
size_t json_utf8_len(const unsigned char *s);

/* Whether s is valid UTF-8. */
int json_utf8_valid(const char *s);

/* A malloc'd copy of s whose bytes that are not UTF-8 are U+FFFD, as
 * json_escape_str writes them; NULL when out of memory. For writers whose
 * format needs UTF-8 but has no escapes (out_pprof.c). */
char *json_utf8_dup(const char *s);

#endif

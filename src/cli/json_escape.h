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

/* Length of the valid UTF-8 sequence of two or more bytes at s, or 0 when
 * there is none (ASCII, overlong forms, surrogates, code points past
 * U+10FFFF, a truncated sequence). The pprof writer uses it too. */
size_t json_utf8_len(const unsigned char *s);

#endif

/*
 * json_escape.h - JSON strings that are safe wherever a report puts them.
 */
#ifndef WASP_JSON_ESCAPE_H
#define WASP_JSON_ESCAPE_H

#include <stdio.h>

/* Writes s (NULL as "") as a JSON string, quotes included. '"' and '\' are
 * escaped; control characters, DEL, '<', '>' and '&' become \u escapes (so
 * the text can sit inside an HTML <script> element: no "</script>", no
 * "<!--"); U+2028 and U+2029 too (so it is valid JavaScript); bytes that
 * are not valid UTF-8 become U+FFFD, so the output is always valid UTF-8. */
void json_escape_str(FILE *f, const char *s);

#endif

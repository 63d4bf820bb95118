/*
 * out_html.h - the report model as one self-contained HTML page: summary,
 * sortable top pairs with both calling contexts side by side, and icicle
 * graphs of wasteful bytes by watch and by trap context, with search.
 */
#ifndef WASP_OUT_HTML_H
#define WASP_OUT_HTML_H

#include "merge.h"

#include <stdio.h>

/* Pairs embedded when the user does not say (--top): enough to scroll
 * through, few enough that a 100k-pair run still opens in a blink. */
#define HTML_DEFAULT_TOP 2000

/* Writes m to f as HTML: the template src/res/report.html with the data
 * embedded as JSON. Embeds the first top pairs (all when top is 0); the
 * graphs aggregate every pair, their narrowest frames folded into their
 * parents. Returns 0, or -1 on a write error or out of memory. */
int html_write_report(FILE *f, const merge_model *m, size_t top);

#endif

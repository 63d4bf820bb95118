/*
 * out_html_code.h - the disassembly in the HTML report: the page's "code"
 * array (docs/report.md, "The code hook") for the contexts it embeds.
 */
#ifndef WASP_OUT_HTML_CODE_H
#define WASP_OUT_HTML_CODE_H

#include "merge.h"

#include <stdio.h>

#define HTML_CODE_MAX_BLOBS 200     /* code blobs one page holds */
#define HTML_CODE_MAX_INSNS 20000   /* instructions, over all its blobs */
#define HTML_CODE_WHOLE 2000        /* a blob this short is shown whole when it fits */
#define HTML_CODE_AROUND 100        /* else: instructions kept either side of each
                                     * instruction a context names */

typedef struct html_code html_code;

/* Decides which code blobs and instructions the page holds for the
 * contexts ctxs[0..n) (model indices, most important first: blobs are
 * taken in that order until a cap is reached). NULL when out of memory. */
html_code *html_code_plan(const merge_model *m, const size_t *ctxs, size_t n);

/* The context's [.., code, pc] elements, each with a leading comma:
 * nothing when its instruction lies in no code blob, code -1 when the caps
 * left the blob out. */
void html_code_ctx(FILE *f, const html_code *hc, size_t ctx);

/* Writes "code":[blob, ...],"code_cap":{...} (no leading or trailing
 * comma). Returns 0, or -1 when out of memory. */
int html_code_write(FILE *f, const html_code *hc);

void html_code_free(html_code *hc);

#endif

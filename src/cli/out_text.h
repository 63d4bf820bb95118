/*
 * out_text.h - the report model for people (after JXPerf's Figure 7).
 */
#ifndef WASP_OUT_TEXT_H
#define WASP_OUT_TEXT_H

#include "merge.h"

#include <stdio.h>

/* Writes m to f, listing the first top pairs (all when top is 0).
 * Returns 0, or -1 when f reports a write error. */
int text_write_report(FILE *f, const merge_model *m, size_t top);

#endif

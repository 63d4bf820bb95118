/*
 * out_json.h - the report model as one JSON document (machine readable).
 */
#ifndef WASP_OUT_JSON_H
#define WASP_OUT_JSON_H

#include "merge.h"

#include <stdio.h>

/* Writes m to f, listing the first top pairs (all when top is 0).
 * Returns 0, or -1 when f reports a write error. */
int json_write_report(FILE *f, const merge_model *m, size_t top);

/* The overhead budget (merge_budget.h) as one JSON object, or null for
 * profiles without one; the HTML report embeds the same. */
void json_write_budget(FILE *f, const merge_budget *b);

#endif

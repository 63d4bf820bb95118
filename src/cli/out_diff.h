/*
 * out_diff.h - writes a diff model (diff.h) as text, JSON or HTML.
 */
#ifndef WASP_OUT_DIFF_H
#define WASP_OUT_DIFF_H

#include <stdio.h>
#include "diff.h"

enum diff_format { DIFF_TEXT, DIFF_JSON, DIFF_HTML };

int diff_format_from_name(const char *name, enum diff_format *out);

/* By the extension of file (.json, .html); text otherwise or for NULL. */
enum diff_format diff_format_for_file(const char *file);

/* top: pairs shown, 0 for all. Returns 0, or -1 on a write error. */
int diff_write(FILE *f, const diff_model *d, enum diff_format format, size_t top);

#endif

/*
 * exact_convert.h - turns the exact tool's raw files (one per process,
 * DIR/.exact/<pid>-<n>.raw, written by src/exact/exact_write.c) into
 * standard profiles, one per thread, DIR/<pid>/<tid>-<n>.wasp, with the
 * profile writer every mode uses (profile_write.c).
 */
#ifndef WASP_EXACT_CONVERT_H
#define WASP_EXACT_CONVERT_H

#include <stddef.h>
#include <stdint.h>

typedef struct exact_summary {
    size_t profiles;         /* thread profiles written */
    int cut;                 /* --exact-limit stopped a process */
    uint64_t instructions;   /* guest instructions of the cut process */
} exact_summary;

/* Converts and removes every raw file under dir/.exact, then the folder.
 * Returns 0, or -1 with a message naming the file and what is wrong. */
int exact_convert_dir(const char *dir, exact_summary *s, char *err, size_t errlen);

/* One raw file (its text in buf, NUL-terminated; modified) into profiles
 * under dir/<pid>/; n numbers them. For tests and exact_convert_dir. */
int exact_convert_text(char *buf, const char *dir, unsigned n, exact_summary *s, char *err, size_t errlen);

#endif

/*
 * profile_read_internal.h - what the reader's three files share:
 * profile_read.c (the file: safe open, bounded lines, end record and
 * checksum), profile_records.c (each record into the profile) and
 * profile_fields.c (scalar fields, escapes, messages).
 */
#ifndef WASP_PROFILE_READ_INTERNAL_H
#define WASP_PROFILE_READ_INTERNAL_H

#include "profile.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define PR_MAX_FIELDS 9            /* one more than the widest record */
#define PR_MAX_SIZE (1ull << 30)   /* a profile beyond 1 GiB is surely not ours */

/* Per-file caps, each well above what the engine writes (CCT and pair
 * tables of 64k and 16k entries, 128 frames a stack), so a damaged or
 * hostile file is refused with a message instead of eating memory. */
#define PR_MAX_LINE ((size_t)2 * PROFILE_CODE_MAX_SIZE + 65536)   /* a code record's hex */
#define PR_MAX_RECORDS (1u << 24)
#define PR_MAX_STATS (1u << 16)
#define PR_MAX_FRAMES (1u << 22)
#define PR_MAX_CONTEXTS (1u << 20)
#define PR_MAX_PAIRS (1u << 20)
#define PR_MAX_CODES (1u << 16)
#define PR_MAX_CODELINES (1u << 22)
#define PR_MAX_CTX_FRAMES PROFILE_MAX_CONTEXT_FRAMES

enum pr_phase { PR_HEADER, PR_STAT, PR_FRAME, PR_CTX, PR_PAIR, PR_CODE };

typedef struct pr_state {
    const char *path;
    char *err;
    size_t errlen;
    profile *p;
    unsigned long line;      /* 1-based number of the record being parsed */
    size_t nheader;          /* header records seen so far */
    enum pr_phase phase;
    size_t cap_stats, cap_frames, cap_contexts, cap_pairs, cap_codes;
    size_t ncodelines;
    char *f[PR_MAX_FIELDS];  /* fields of the current record */
    size_t nf;
} pr_state;

/* Messages: "<path>: <what>" and "<path>:<line>: <what>"; return -1. */
int pr_fail(pr_state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int pr_fail_at(pr_state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "bad <record> record (<detail>)"; only once f[0] is a record name of ours. */
int pr_bad(pr_state *s, const char *detail);

/* Scalar fields: 0, or -1 when malformed. */
int pr_u64(const char *t, uint64_t *out);
int pr_u32(const char *t, uint32_t *out);
int pr_i64(const char *t, int64_t *out);
int pr_xdigit(char c, int upper);
int pr_hex64(const char *t, uint64_t *out);
int pr_double(const char *t, double *out);
/* Unescapes field i into a heap string *dst; on failure sets the message. */
int pr_field_str(pr_state *s, size_t i, char **dst, const char *what);
/* Unescapes fields idx[0..n) into one heap block, *dst[0] its start and
 * the others inside it (a frame's four strings: one allocation, not four,
 * so a profile costs little more memory than its file). */
int pr_fields_packed(pr_state *s, const size_t *idx, char **const *dst, size_t n,
                     const char *const *what);
/* Room for one more element in *arr, at most limit of them (what names
 * the records in the message). */
int pr_grow(pr_state *s, void **arr, size_t *cap, size_t n, size_t elem, size_t limit,
            const char *what);

/* Splits a line (len bytes, writable, no '\n') into s->f; 0 or -1. */
int pr_split(pr_state *s, char *line, size_t len);
/* Parses the record in s->f into s->p; 0 or -1. */
int pr_record(pr_state *s);
/* After the last record: the header must be complete. 0 or -1. */
int pr_records_done(pr_state *s);

#endif

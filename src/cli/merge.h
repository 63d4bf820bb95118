/*
 * merge.h - the report model: every thread profile of a run coalesced into
 * one (paper §5.6), with the Eq. 1/2 fractions computed.
 *
 * Two contexts are the same when they are symbolically equal: the same
 * frames (function, file, line), leaf first. Pcs, modules and the leaf
 * instruction are not part of the identity, so threads and processes with
 * different load addresses coalesce, and so do the copies of one source
 * line that loop unrolling or a JIT makes (merge.c). The report writers
 * (out_text.c, out_json.c, out_html.c, out_collapsed.c) read this model and
 * nothing else.
 *
 * A context shows one instruction: of its occurrences, one whose pc lies in
 * the machine code of a JIT-compiled method (a code blob its profile kept)
 * beats one outside, then the one with the most bytes wins. It keeps that
 * instruction's pc and, when there is one, the blob, deduplicated across
 * threads (merge_code.c), so the HTML report can disassemble it around the
 * instruction.
 */
#ifndef WASP_MERGE_H
#define WASP_MERGE_H

#include "merge_budget.h"
#include "profile.h"

#include <stddef.h>
#include <stdint.h>

#define MERGE_NO_CODE SIZE_MAX

typedef struct merge_frame {
    char *function;
    char *file;         /* "" when unknown */
    uint32_t line;      /* 0 when unknown */
    char *module;       /* of the first occurrence; display only */
} merge_frame;

typedef struct merge_ctx {
    size_t nframes;
    merge_frame *frames;    /* leaf first */
    char *instruction;      /* the leaf's */
    uint64_t pc;            /* the leaf's, in the process it was seen in */
    size_t code;            /* index into merge_model.codes of the code holding pc,
                             * or MERGE_NO_CODE */
    uint64_t leaf_weight;   /* bytes of the occurrence whose leaf is shown */
    char *key;              /* identity bytes (see merge.c) */
    size_t keylen;
} merge_ctx;

typedef struct merge_pair {
    const merge_ctx *watch;     /* C1 */
    const merge_ctx *trap;      /* C2 */
    size_t watch_id, trap_id;   /* indices into merge_model.contexts */
    uint64_t count, bytes, wasteful_bytes, approx_bytes;
    double fraction;            /* wasteful_bytes / model bytes (Eq. 2) */
    double approx_fraction;     /* approx_bytes / model bytes */
} merge_pair;

typedef struct merge_stat {
    char *name;
    uint64_t value;
} merge_stat;

struct merge_map;

/* What makes two profile files the same thread's profile. */
typedef struct merge_profile_id {
    int64_t pid, tid;
    uint64_t crc, records;
} merge_profile_id;

typedef struct merge_model {
    char mode[32];
    char sampler[32];           /* "mixed" when threads disagree */
    char watch_check[32];       /* processes' self-test result, "mixed" when they disagree */
    uint64_t interval;          /* of the first thread ... */
    int interval_mixed;         /* ... unless threads disagree */
    double fp_tolerance;        /* the largest seen */
    size_t nprocesses, nthreads;
    size_t duplicates;          /* profile files seen again (copies) and counted once */
    size_t checkpoints;         /* threads whose data is a checkpoint (their process did not end) */
    uint64_t checkpoint_oldest_ms;   /* when the oldest of those was taken, Unix ms */
    const char *incomplete;     /* what the run is missing, or NULL (set by the report) */
    uint64_t count, bytes, wasteful_bytes, approx_bytes;   /* over all pairs */
    double fraction, approx_fraction;                      /* Eq. 1 */
    double fraction_lo, fraction_hi;   /* 95% sampling interval of fraction, over count pairs */
    /* The pair holding the most monitored bytes (an index into pairs; valid
     * when npairs), its share, and the program fraction without it: a
     * watch that survived many samples stands for all of them (watch.h),
     * and one pair found once can outweigh every other. */
    size_t heaviest;
    double heaviest_share, fraction_without_heaviest;
    merge_stat *stats;  size_t nstats;      /* summed; sorted by name */
    merge_ctx **contexts; size_t ncontexts;
    merge_pair *pairs;  size_t npairs;      /* sorted, most wasteful first */
    prof_code **codes;  size_t ncodes;      /* code blobs contexts refer to, each once */
    merge_budget budget;                    /* the overhead budget's accounts */
    /* private */
    char *first_path;
    struct merge_map *ctx_map, *pair_map, *code_map, *stat_map, *pid_map, *seen_map;
    int64_t *pids;
    merge_profile_id *seen; size_t nseen;
    size_t cap_stats, cap_contexts, cap_pairs, cap_pids, cap_codes, cap_seen;
} merge_model;

void merge_init(merge_model *m);

/* Whether the heaviest pair decides the program fraction on its own: it
 * holds a quarter or more of the bytes, leaving it out moves the fraction
 * 5 points or more, and it was found far more rarely than its bytes say
 * (its share of the pairs counted is under an eighth of its share of the
 * bytes). Two planted pairs of equal weight are not that, nor any pair
 * of the exact mode, which weighs nothing. */
int merge_heaviest_decides(const merge_model *m);

/* Adds one thread's profile (read from path). Returns 0, or -1 with a
 * message in err: profiles of different modes, or out of memory. */
int merge_add(merge_model *m, const profile *p, const char *path, char *err, size_t errlen);

/* Computes fractions and sorts pairs (by fraction, then approximate
 * fraction, then bytes, all descending) and stats (by name). */
void merge_finish(merge_model *m);

/* Armed at least this many watches, and none trapped: the machine's
 * watchpoints probably never fire (and the run has no pairs to show).
 * Watches that never fire stay armed, so the reservoir arms only about
 * k(1 + ln(n/k)) of n samples with k slots: with 3 for watches (one is kept
 * for guards) 12 means ~60 samples, where watches that fire would have
 * trapped within milliseconds. */
#define MERGE_SILENT_WATCHES 12

/* A sentence warning that the run's watches never trapped, or NULL. */
const char *merge_watch_warning(const merge_model *m, char *buf, size_t len);

/* When the oldest checkpoint of the run was taken, "at 2026-11-23
 * 18:48:22 UTC"; buf. */
const char *merge_checkpoint_time(const merge_model *m, char *buf, size_t len);

/* The words for C2 relative to C1 in this mode: "killed by" (dead-store),
 * "rewritten silently by" (silent-store), "reloaded silently by"
 * (silent-load). One place, so every report says the same. */
const char *merge_relation(const char *mode);

/* 1 when the samplers of m sampled by CPU time (software: the task clock;
 * ctimer: the CPU-time timer), so intervals are nanoseconds and samples
 * are drawn from code as sampler_soft.c draws them. */
int merge_sampler_timed(const merge_model *m);

/* Summed value of a stat, 0 when absent; after merge_finish (a binary
 * search of the stats it sorted). */
uint64_t merge_stat_value(const merge_model *m, const char *name);

void merge_free(merge_model *m);

#endif

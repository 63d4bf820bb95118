/*
 * profile.h - one thread's profile as plain, symbolized data.
 *
 * The engine fills it when a thread ends (outside any signal handler) and
 * writes it with profile_write(); the CLI reads it back with profile_read()
 * (src/cli/profile_read.c). The on-disk format is docs/profile-format.md.
 */
#ifndef WASP_PROFILE_H
#define WASP_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PROFILE_MAGIC "wasp-profile"
#define PROFILE_VERSION 2
/* The stat that marks a checkpoint (a live thread's data so far, written
 * while the program ran) and says when it was taken, in Unix ms; a final
 * profile has none (docs/profile-format.md, "Checkpoints"). */
#define PROFILE_CHECKPOINT_STAT "checkpoint_at_ms"
/* A thread's profile is <tid>-<n>.wasp in its pid directory; its
 * checkpoint, which that file supersedes, <tid>-<n>.checkpoint. */
#define PROFILE_CHECKPOINT_SUFFIX ".checkpoint"

typedef struct prof_frame {
    char *function;     /* "write_round", "java.util.ArrayList.add"; never NULL */
    char *file;         /* source file, "" when unknown */
    uint32_t line;      /* 0 when unknown */
    char *module;       /* "/usr/lib/x86_64-linux-gnu/libc.so.6", "" when unknown */
    uint64_t pc;        /* address in the profiled process (informational) */
    char *instruction;  /* AT&T text of the access; "" for non-leaf frames */
} prof_frame;

typedef struct prof_context {
    uint32_t nframes;
    uint32_t *frames;   /* indices into profile.frames, leaf first */
} prof_context;

typedef struct prof_pair {
    uint32_t watch_ctx;       /* index into profile.contexts: C1, where the sample armed the watch */
    uint32_t trap_ctx;        /* C2, where the watchpoint trapped */
    uint64_t count;           /* traps recorded for this pair */
    uint64_t bytes;           /* bytes monitored (denominator of Eq. 1/2) */
    uint64_t wasteful_bytes;  /* dead, or precisely silent, bytes */
    uint64_t approx_bytes;    /* approximately (not precisely) silent FP bytes */
} prof_pair;

/* Machine code of a JIT-compiled method whose instructions appear in the
 * profile's contexts, so reports can show its disassembly later. */
typedef struct prof_code_line {
    uint32_t offset;    /* from the code start; holds until the next entry's offset */
    uint32_t line;      /* 0 when unknown */
    char *function;     /* the method these instructions belong to (an inlined callee, say) */
    char *file;
} prof_code_line;

/* Largest code a profile holds (bytes); the writer refuses larger ones. */
#define PROFILE_CODE_MAX_SIZE (4u << 20)
/* The most frames a context may name (readers refuse more): a deep stack
 * of inlined code is cut at its root end to fit. */
#define PROFILE_MAX_CONTEXT_FRAMES 1024

typedef struct prof_code {
    char *name;         /* the compiled method, "java.util.ArrayList.add" */
    uint64_t start;     /* address of its first byte in the profiled process */
    uint32_t size;
    uint8_t *bytes;
    uint32_t nlines;
    prof_code_line *lines;  /* by increasing offset */
} prof_code;

typedef struct prof_stat {
    char *name;         /* "samples", "traps", "handler_ns", "drop.not_memory", ... */
    uint64_t value;
} prof_stat;

typedef struct profile {
    char mode[32];          /* "dead-store" | "silent-store" | "silent-load" */
    char sampler[32];       /* "software" | "pmu" */
    char watch_check[32];   /* the process's watch self-test: "fires 4/4", "never-fires 0/4", "unchecked" */
    int64_t pid, tid;
    char *thread_name;      /* "" when unknown */
    char *command;          /* "" when unknown */
    uint64_t interval;      /* sampler period: ns for software, events for pmu */
    double fp_tolerance;
    prof_stat *stats;       size_t nstats;
    prof_frame *frames;     size_t nframes;
    prof_context *contexts; size_t ncontexts;
    prof_pair *pairs;       size_t npairs;
    prof_code *codes;       size_t ncodes;   /* frames whose pc lies in one refer to it;
                                              * profile_read gives them by start */
    uint64_t crc, records;  /* of the file, as its end record says (profile_read only) */
} profile;

/* Atomically writes p to path (temp file + rename). Returns 0, or -1 with a
 * message in err. Not signal-safe. */
int profile_write(const profile *p, const char *path, char *err, size_t errlen);

/* Reads path into *p (all strings and arrays heap-allocated). Returns 0, or
 * -1 with a message in err naming the file and what is wrong with it
 * (foreign file, unsupported version, truncated, checksum mismatch, bad
 * field). Never crashes on any input. */
int profile_read(const char *path, profile *p, char *err, size_t errlen);

/* The same from a file in dirfd, never through a symlink (a run
 * directory's walk); path names it in messages. */
int profile_read_at(int dirfd, const char *name, const char *path, profile *p, char *err,
                    size_t errlen);

/* The same from an open stream (seekable: it is read twice); for tests
 * and fuzzers. */
int profile_read_stream(FILE *f, const char *path, profile *p, char *err, size_t errlen);

/* Frees everything profile_read allocated; safe on a zeroed profile. */
void profile_free(profile *p);

/* Frees a code's name, bytes and line table (not c itself); for whoever
 * fills one: the engine, profile_read, the report model. */
void prof_code_clear(prof_code *c);

/* CRC-32 (IEEE, as zlib) of the bytes before a profile's end record. */
unsigned long profile_crc(const char *buf, size_t len);

/* Value of a stat by name, 0 when absent. */
uint64_t profile_stat(const profile *p, const char *name);

/* A process's ended-threads profile has this tid and at least one
 * `threads_folded`: the counters of its threads that ended with no pair,
 * folded into one file (docs/profile-format.md). */
#define PROFILE_ENDED_TID 0

int profile_is_ended(const profile *p);

/* The threads a profile stands for: 1, or the ended-threads profile's
 * `threads_folded`. */
uint64_t profile_threads(const profile *p);

#endif

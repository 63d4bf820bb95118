/*
 * exact_raw.h - the exact tool's raw file, parsed (format in
 * exact_convert.c). Strings point into the parsed buffer, which must
 * outlive the result; instructions are decoded here (Zydis).
 */
#ifndef WASP_EXACT_RAW_H
#define WASP_EXACT_RAW_H

#include <stddef.h>
#include <stdint.h>
#include "profile.h"

/* Node chains are followed this far: a call site in inlined code is a node
 * per function inlined there, and contexts are cut, as the sampled mode's,
 * to what a profile holds (the leaf's frame and as many callers). */
#define EXACT_RAW_MAX_DEPTH (PROFILE_MAX_CONTEXT_FRAMES - 1)

typedef struct exact_sym {
    uint64_t pc;
    const char *function, *file, *module;
    uint32_t line;
} exact_sym;

/* The tool's ids are sparse (only the nodes contexts use are written) and
 * may reach 2^32: nodes are kept densely, in the file's (increasing) id
 * order, and referred to by index. */
typedef struct exact_node_raw {
    uint32_t id;         /* the file's */
    uint32_t parent;     /* index, 0: the root */
    exact_sym sym;       /* of the call site */
} exact_node_raw;

/* Leaf ids index leaves directly: the tool names at most 2^23 (its
 * EXACT_MAX_CTX, src/exact/exact.h: change both together). */
#define EXACT_RAW_MAX_LEAF (1u << 23)

typedef struct exact_leaf {
    int present;
    uint32_t node;       /* index into nodes, 0: the root */
    exact_sym sym;       /* of the accessing instruction */
    char *instruction;   /* AT&T text, "" when its bytes were not kept */
    uint8_t fp;          /* enum access_fp of its memory operand */
    uint32_t code;       /* the JIT code its pc lies in, 0 when none was kept */
} exact_leaf;

/* From offset up to the next line's, the code is line of function in file. */
typedef struct exact_code_line {
    uint32_t offset, line;
    const char *function, *file;
} exact_code_line;

/* A JIT-compiled method's machine code, as the tool copied it when the
 * JVM reported it. */
typedef struct exact_code_raw {
    int present;
    const char *name;
    uint64_t start;
    uint32_t size;
    uint8_t *bytes;
    exact_code_line *lines;   /* by increasing offset */
    size_t nlines, cap_lines;
} exact_code_raw;

typedef struct exact_stat_raw {
    const char *name;
    uint64_t value;
} exact_stat_raw;

/* Pairs the tool wrote without their contexts: their sums. */
typedef struct exact_fold_raw {
    uint64_t count, bytes, wasteful;
} exact_fold_raw;

typedef struct exact_thread_raw {
    uint32_t index;
    int64_t os_tid;
    exact_stat_raw *stats;
    size_t nstats;
    exact_fold_raw small;     /* pairs the tool folded for their size */
    exact_fold_raw unnamed;   /* pairs whose contexts were past the tool's table */
} exact_thread_raw;

typedef struct exact_pair_raw {
    uint32_t thread, c1, c2;
    uint64_t count, bytes, wasteful, approx64, approx32;
} exact_pair_raw;

typedef struct exact_raw {
    char mode[32];
    int64_t pid;
    const char *command;
    double fp_tolerance;
    uint64_t instructions;
    int cut;
    exact_node_raw *nodes;   size_t nnodes;    /* [0] is the root */
    exact_leaf *leaves;      size_t nleaves;   /* indexed by id */
    exact_thread_raw *threads; size_t nthreads;
    exact_pair_raw *pairs;   size_t npairs;
    exact_code_raw *codes;   size_t ncodes;    /* indexed by id, from 1 */
    uint64_t code_kept, code_left_out;         /* bytes of JIT code (Java processes) */
    uint64_t contexts;                         /* leaf contexts the tool named */
} exact_raw;

/* Parses buf (modified in place). Returns 0, or -1 with the line and what
 * is wrong with it. */
int exact_raw_parse(char *buf, exact_raw *r, char *err, size_t errlen);

void exact_raw_free(exact_raw *r);

/* A thread's stat by name, 0 when absent. */
uint64_t exact_raw_stat(const exact_thread_raw *t, const char *name);

#endif

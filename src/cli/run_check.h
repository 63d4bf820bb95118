/*
 * run_check.h - checks `wasp run` makes around the command it starts.
 */
#ifndef WASP_RUN_CHECK_H
#define WASP_RUN_CHECK_H

#include <stddef.h>

/* 1 when cmd (looked up in PATH like execvp) is a statically linked ELF
 * program, which LD_PRELOAD cannot reach; its path is left in path. */
int run_check_static(const char *cmd, char *path, size_t len);

typedef struct {
    const char *symbol, *name, *why;
} run_sanitizer;

/* The sanitizer cmd (looked up like execvp) is built with when it is one
 * that cannot run under Valgrind (the exact mode's engine); else NULL. */
const run_sanitizer *run_check_sanitizer(const char *cmd);

/* After the command ended with status rc: says where the profile is, or
 * that the run is incomplete and why (the processes' manifests), or why
 * there is none: a library that loaded but wrote nothing is told apart
 * from one that never loaded. */
void run_check_outcome(const char *dir, int rc, int is_static, const char *cmd);

#endif

/*
 * run_check.h - checks `wasp run` makes around the command it starts.
 */
#ifndef WASP_RUN_CHECK_H
#define WASP_RUN_CHECK_H

#include <stddef.h>

/* 1 when cmd (looked up in PATH like execvp) is a statically linked ELF
 * program, which LD_PRELOAD cannot reach; its path is left in path. */
int run_check_static(const char *cmd, char *path, size_t len);

/* Profile files (DIR/<pid>/NAME.wasp) in a run directory. */
size_t run_check_count_profiles(const char *dir);

#endif

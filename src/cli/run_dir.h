/*
 * run_dir.h - the run directory (-o DIR): made ready before the program
 * starts, and holding one run's profiles only.
 */
#ifndef WASP_RUN_DIR_H
#define WASP_RUN_DIR_H

#include <stddef.h>

/* Makes -o DIR ready before the program runs: refuses "", a symlink,
 * anything not a directory, and a directory that holds an earlier run (a
 * report would mix the two); creates it (mode 0700) when absent; proves it
 * writable by making and removing an entry. 0, or -1 with a message naming
 * the fix. */
int run_dir_check(const char *dir, char *err, size_t errlen);

/* The default DIR, into dir: wasp-PID in the working directory, or
 * wasp-PID-N, the first N from 2 not taken (a container's wasp has the same
 * pid every time it starts). 0, or -1 when none is free. */
int run_dir_default(char *dir, size_t len);

#endif

/*
 * run_exact.h - `wasp run --exact`: the command under Valgrind with wasp's
 * exhaustive tool (src/exact/), then its raw files made into profiles.
 */
#ifndef WASP_RUN_EXACT_H
#define WASP_RUN_EXACT_H

#include "options.h"

/* Runs command with every access watched, writes dir/<pid>/<tid>-<n>.wasp
 * (sampler "exact"). limit: NULL, a count of guest instructions ("500m")
 * or a duration ("30s"). Returns the command's exit status, or 2 with one
 * "[wasp] ERROR" line when it could not be run or profiled. */
int run_exact(const wasp_options *o, const char *dir, char **command, const char *limit);

#endif

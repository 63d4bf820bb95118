/*
 * run.h - `wasp run`: launch a command with the profiler preloaded.
 */
#ifndef WASP_RUN_H
#define WASP_RUN_H

#include <stddef.h>

int run_main(int argc, char **argv);

/* The options part of run_main alone: flags into the escaped option
 * string, parsed back by the library's parser. 0, or 2 on a usage error
 * (printed) or a bad option (in err). For tests and fuzzers. */
int run_parse_options(int argc, char **argv, char *err, size_t errlen);

#endif

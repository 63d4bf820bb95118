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
#include <sys/types.h>

int run_main(int argc, char **argv);

/* Waits for the command wasp started, as a shell would (^C goes to it;
 * SIGTERM and SIGHUP are passed on); returns its exit status, 128+N when
 * killed by signal N. */
int run_wait(pid_t child);

#endif

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

/* Shared with `wasp attach` (attach.c). */
struct wasp_options;
/* Appends key=value (value escaped) to the option string options[size];
 * 0, or -1 when it does not fit. */
int run_append_option(char *options, size_t size, const char *key, const char *value);
/* The option key of a command-line flag ("--mode" -> "mode"), or NULL. */
const char *run_flag_key(const char *flag);
/* What this machine offers for o: perf events, the sampler (appended as
 * sampler=...), watchpoints that fire (else refuses unless no_watch_check,
 * then appends watch-check=off), an interval it sustains. Prints one line
 * and returns -1 when wasp cannot profile. */
int run_check_machine(const struct wasp_options *o, int no_watch_check, char *options, size_t size);
/* libwasp.so next to the wasp binary (../lib), canonical. 0, or -1 after
 * one [wasp] ERROR line naming the fix. */
int run_find_library(char *out, size_t len);

#endif

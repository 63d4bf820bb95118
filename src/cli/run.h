/*
 * run.h - `wasp run`: launch a command with the profiler preloaded.
 */
#ifndef WASP_RUN_H
#define WASP_RUN_H

#include <sys/types.h>

int run_main(int argc, char **argv);

/* Waits for the command wasp started, as a shell would (^C goes to it;
 * SIGTERM and SIGHUP are passed on); returns its exit status, 128+N when
 * killed by signal N. */
int run_wait(pid_t child);

#endif

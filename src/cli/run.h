/*
 * run.h - `wasp run`: launch a command with the profiler preloaded.
 */
#ifndef WASP_RUN_H
#define WASP_RUN_H

int run_main(int argc, char **argv);

#endif

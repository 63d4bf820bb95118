/*
 * run_env.h - the environment that brings libwasp.so into every process
 * `wasp run` starts, whatever characters its path and options hold.
 */
#ifndef WASP_RUN_ENV_H
#define WASP_RUN_ENV_H

#include <stddef.h>

/* Sets LD_PRELOAD (and LD_LIBRARY_PATH when lib's path needs it),
 * JAVA_TOOL_OPTIONS, ASAN_OPTIONS (ASan lets libwasp.so load first) and WASP_OPTIONS for lib (an absolute path) and
 * options (escaped key=value,...). 0, or -1 with a message naming the fix. */
int run_env_set(const char *lib, const char *options, char *err, size_t errlen);

/* The JAVA_TOOL_OPTIONS part alone: -agentpath:LIB=OPTIONS put first. */
int run_env_java_agent(const char *lib, const char *options, char *err, size_t errlen);

#endif

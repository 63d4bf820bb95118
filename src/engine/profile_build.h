/*
 * profile_build.h - turns a stopped thread's tables into a written profile.
 */
#ifndef WASP_PROFILE_BUILD_H
#define WASP_PROFILE_BUILD_H

#include <stddef.h>
#include "engine.h"
#include "thread.h"

/* Symbolizes the contexts the thread's pairs use and writes
 * dir/<tid>.wasp; watch_check is the process's self-test result. Normal context; the thread must no longer take signals.
 * Returns 0, or -1 with a message naming the fix. */
int profile_build_write(const thread_state *t, const wasp_options *o, const engine_frontend *fe,
                        const char *sampler_name, const char *watch_check, const char *dir,
                        char *err, size_t errlen);

/* Normal context, once per image: profile numbers start after the files
 * already in dir. */
void profile_build_number_from(const char *dir);

#endif

/*
 * profile_build.h - turns a thread's tables (the ended thread's, or a
 * checkpoint's copy) into a written profile.
 */
#ifndef WASP_PROFILE_BUILD_H
#define WASP_PROFILE_BUILD_H

#include <stddef.h>
#include "engine.h"
#include "thread.h"

/* What every profile of the process shares. */
typedef struct profile_build_env {
    const wasp_options *opts;
    const engine_frontend *fe;
    const char *sampler_name;
    const char *watch_check;    /* the process's self-test result */
    const char *dir;            /* the pid directory */
    int pid;                    /* the process's (a guardian writes for it: guardian.h) */
} profile_build_env;

/* The name of a thread's profile in its pid directory: <tid>-<seq>.wasp
 * when final, <tid>-<seq>.checkpoint for a checkpoint, which the final one
 * supersedes (docs/profile-format.md, "Checkpoints"). */
int profile_build_name(char *buf, size_t len, const char *dir, int tid, uint64_t seq,
                       int checkpoint);

/* Symbolizes the contexts the thread's pairs use and writes its profile
 * into env->dir: the final one (checkpoint_ms 0; its checkpoint is then
 * removed), or a checkpoint taken at checkpoint_ms (Unix time), which is
 * removed again if the final one is already there. Normal context; t
 * takes no signals that change it (ended, or a checkpoint's copy).
 * Returns 0, or -1 with a message naming the fix and errno set. */
int profile_build_write(const thread_state *t, const profile_build_env *env,
                        uint64_t checkpoint_ms, char *err, size_t errlen);

/* Normal context, once per image: profile numbers start after those of
 * the files already in dir. */
void profile_build_number_from(const char *dir);

/* The next profile number of this process, taken when a thread starts. */
uint64_t profile_build_next_seq(void);

#endif

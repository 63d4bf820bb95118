/*
 * report_walk.h - finding a run's profiles and manifests.
 */
#ifndef WASP_REPORT_WALK_H
#define WASP_REPORT_WALK_H

#include <stddef.h>
#include "completeness.h"

typedef struct report_paths {
    char **v;           /* sorted */
    size_t n, cap;
    size_t links;       /* symbolic links met and not followed */
    size_t superseded;  /* checkpoints left out: their final profile is there */
} report_paths;

/* DIR may be a run directory, one pid directory, or a single file (which
 * may be reached through a link the user named). Inside a directory no
 * symbolic link is followed, so a link loop or a link out of the run adds
 * nothing; manifests go to c. 0, or -1 with the message printed. */
int report_walk_find(report_paths *ps, completeness *c, const char *dir);

/* A thread's final profile, <tid>-<n>.wasp, supersedes its checkpoint,
 * <tid>-<n>.checkpoint, in the same directory: each thread is counted
 * once, whether its process ended normally, was killed between
 * checkpoints, or died while one was written (docs/profile-format.md,
 * "Checkpoints"). Removes (and frees) the superseded checkpoints from the
 * sorted ps; their count. report_walk_find does it. */
size_t report_walk_supersede(report_paths *ps);

/* Whether path names a checkpoint. */
int report_walk_is_checkpoint(const char *path);

void report_walk_free(report_paths *ps);

#endif

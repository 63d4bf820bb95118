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
} report_paths;

/* DIR may be a run directory, one pid directory, or a single file (which
 * may be reached through a link the user named). Inside a directory no
 * symbolic link is followed, so a link loop or a link out of the run adds
 * nothing; manifests go to c. 0, or -1 with the message printed. */
int report_walk_find(report_paths *ps, completeness *c, const char *dir);

void report_walk_free(report_paths *ps);

#endif

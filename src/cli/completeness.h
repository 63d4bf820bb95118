/*
 * completeness.h - whether a run's profiles are all there.
 *
 * Reads the manifests processes leave in DIR/<pid>/ (src/engine/manifest.h)
 * and compares the threads each started with the profiles the report
 * found, so a report can say "3 of 5 threads' profiles missing (the
 * process was killed before it wrote them)".
 */
#ifndef WASP_COMPLETENESS_H
#define WASP_COMPLETENESS_H

#include <stddef.h>
#include <stdint.h>

enum comp_reason { COMP_DISK_FULL, COMP_WRITE, COMP_FDS, COMP_MEMORY, COMP_EVENTS, COMP_OTHER,
                   COMP_NREASONS };

typedef struct comp_process {
    int64_t pid;
    uint64_t started, wrote, found;
    uint64_t lost[COMP_NREASONS];
    int exited;         /* its last image wrote the exit record */
    int ended;          /* of which "ended": its guardian wrote after it (no exit handlers) */
    int sandboxed;      /* it limited its own system calls (seccomp): its profiles end there */
} comp_process;

typedef struct completeness {
    comp_process *procs;
    size_t nprocs, cap_procs;
    struct comp_found { int64_t pid; uint64_t threads; } *found;  /* every profile loaded */
    size_t nfound, cap_found;
} completeness;

/* Reads the manifest name in dirfd (path for messages), never through a
 * symlink. 0, or -1 with a message (a damaged or foreign manifest). */
int completeness_read(completeness *c, int dirfd, const char *name, const char *path,
                      char *err, size_t errlen);

/* One profile of process pid was loaded, standing for threads threads (1,
 * or an ended-threads profile's count: profile_threads). 0, or -1 when out
 * of memory. */
int completeness_found(completeness *c, int64_t pid, uint64_t threads);

/* Missing profiles over the processes with manifests (only pid when
 * only_pid >= 0); when any, msg gets "N of M threads' profiles missing
 * (why)". */
uint64_t completeness_missing(completeness *c, int64_t only_pid, char *msg, size_t len);

/* The processes with a manifest but no profile found, and what their
 * manifests say: for `wasp run` when a run left nothing. */
uint64_t completeness_processes(const completeness *c);

/* Processes whose last image ended without its exit handlers, their
 * profiles written after them by their guardian (manifest "ended"). */
uint64_t completeness_ended(const completeness *c);
/* Processes that went on with their system calls limited by a seccomp
 * filter, unprofiled from there on (manifest "sandboxed"). */
uint64_t completeness_sandboxed(const completeness *c);

/* The pid named by the directory of path (DIR/<pid>/NAME), or -1. */
int64_t completeness_pid_of(const char *path);

void completeness_free(completeness *c);

#endif

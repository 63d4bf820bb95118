/*
 * manifest.h - what a profiled process owes its run: DIR/<pid>/manifest.
 *
 * Each process records the threads it started profiling, each profile it
 * wrote, each it lost and why, and its orderly exit, so `wasp report` can
 * tell a complete run from one whose process was killed, whose disk filled
 * or whose threads went over the descriptor budget (docs/profile-format.md,
 * "Manifest"). Normal context only.
 */
#ifndef WASP_MANIFEST_H
#define WASP_MANIFEST_H

#include <sys/types.h>

#define MANIFEST_NAME "manifest"
#define MANIFEST_MAGIC "wasp-manifest"
#define MANIFEST_VERSION 1

/* Why a thread has no profile. */
#define MANIFEST_LOST_DISK_FULL "disk_full"
#define MANIFEST_LOST_WRITE "write_error"
#define MANIFEST_LOST_FDS "descriptor_budget"
#define MANIFEST_LOST_MEMORY "out_of_memory"
#define MANIFEST_LOST_EVENTS "perf_events"

/* Creates (or, after exec, reopens) the manifest of pid_dir. 0 or -1. */
int manifest_open(const char *pid_dir, int pid);

/* One record each; failures are ignored (the report then sees a thread
 * started and never written, which it still counts as missing). */
void manifest_started(int tid);
void manifest_wrote(int tid);
void manifest_lost(int tid, const char *reason);
void manifest_exited(void);
/* The process ended without its exit handlers; its guardian wrote what it
 * could after it (guardian.h). */
void manifest_ended(void);
/* The process is about to become uid: the manifest must stay writable. */
void manifest_give(uid_t uid);
/* The process went on with its system calls limited (a seccomp filter):
 * its profiles end there (engine_sandboxed). */
void manifest_sandboxed(void);

#endif

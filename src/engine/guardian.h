/*
 * guardian.h - a process that shares the profiled process's memory and
 * writes its profiles after it ended without running its exit handlers.
 *
 * A program that ends by a raw exit_group (every Go program: its runtime
 * makes the system call itself), by SIGKILL, or by a signal's default
 * action never reaches atexit, so its profiles were lost (all of them, for
 * a run shorter than the --flush period). The guardian is a child made
 * with clone(CLONE_VM) and no CLONE_THREAD: it is not in the program's
 * thread group, so it outlives it and keeps its memory, where every
 * thread's tables still are. guardian_start runs in normal context or in
 * an atfork child handler; guardian_stop is async-signal-safe (kill and
 * waitpid), since a program may exec from a signal handler.
 */
#ifndef WASP_GUARDIAN_H
#define WASP_GUARDIAN_H

#define GUARDIAN_NAME "wasp-guardian"   /* its comm, for ps and wasp run */

/* Starts this process's guardian, which calls write_after_end (in the
 * guardian, with the process gone) if the process ends while the guardian
 * watches it, and leaves when the process exec's. Its pid, or -1 (no
 * pidfd_open, no clone: the process then goes unguarded, as before). */
int guardian_start(void (*write_after_end)(void));

/* Before an exec, its profiles written: the guardian is stopped and reaped
 * now rather than left to find out (within a second) that the memory it
 * holds, a whole image's, is no longer the process's. */
void guardian_stop(void);

#endif

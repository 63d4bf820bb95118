/*
 * checkpoint.h - every live thread's profile so far, written every
 * flush period while the program runs (issue 13), so a SIGKILL, a crash
 * or an OOM kill loses at most one period of data.
 *
 * A thread of wasp's own (never profiled, every signal blocked) wakes each
 * period and, one profiled thread at a time, has the thread's handler
 * stand aside (the Dekker handshake of thread_wait_quiet, on t->pausing),
 * copies its tables, lets it go on, and writes the copy as
 * <tid>-<seq>.checkpoint beside where <tid>-<seq>.wasp will go. The thread
 * itself never stops: only the samples and traps that arrive during the
 * copy are dropped (and counted). Normal context only.
 */
#ifndef WASP_CHECKPOINT_H
#define WASP_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>
#include "engine.h"
#include "thread.h"

/* Starts the checkpoint thread of this process (once; again in a forked
 * child). 0, or -1 with errno set. */
int checkpoint_start(uint64_t period_ns, const engine_frontend *fe);

/* No checkpoint starts after this returns; one under way is waited for
 * (up to 2 s: a write stuck on a lock the exiting code holds is left). */
void checkpoint_stop(void);

/* In a forked child: the parent's checkpoint thread did not come along,
 * and may have held the lock. */
void checkpoint_after_fork_child(void);

/* What engine.c gives the checkpoint thread (all take the registry lock). */

/* The numbers (thread_state.seq) of the live threads, malloc'd; the count. */
size_t engine_live_seqs(uint64_t **out);

/* fn(t, arg) under the registry lock, for the live thread numbered seq:
 * fn's result, or -1 when that thread has ended or is ending. */
int engine_with_thread(uint64_t seq, int (*fn)(thread_state *t, void *arg), void *arg);

/* Writes a copy of a thread's state as its checkpoint, taken at at_ms
 * (Unix time). 0, or -1 with a message and errno set. */
int engine_write_checkpoint(thread_state *copy, uint64_t at_ms, char *err, size_t errlen);

#endif

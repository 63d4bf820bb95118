/*
 * writer.h - the thread that writes a native process's last profiles.
 *
 * A process can end where writing is not safe: in a signal handler that
 * interrupted malloc and calls _exit, or by a stop signal (SIGINT, SIGTERM,
 * SIGHUP) left at its default action. Writing needs malloc, locks, stdio
 * and libdw, so it is always done here, by one thread per process that
 * blocks every signal and waits on a futex, never on a descriptor the
 * program could close or reuse. The requests are async-signal-safe. While
 * the program runs it also builds the function tables handlers ask for
 * (func_table.c), which need libdw too.
 */
#ifndef WASP_WRITER_H
#define WASP_WRITER_H

#include <sys/types.h>

/* Normal context, once the engine runs (and in a forked child, whose
 * parent's writer did not come along). Returns 0 or -1. */
int writer_start(void);

/* Async-signal-safe. Writes every profile, then kills thread tid by sig
 * with its default action restored (restore, a callback run by the writer,
 * gives the default back). Returns -1 when no writer can take it: the
 * caller must then die by the signal itself. */
int writer_request_stop(int sig, pid_t tid, void (*restore)(void));

/* Async-signal-safe. Has the writer build the function table a handler
 * asked for (func_table.c) while the program runs. -1 when this process
 * has no writer; 0 otherwise (also when it is writing the last profiles). */
int writer_request_tables(void);

/* Async-signal-safe. Has every profile written and waits for it up to
 * timeout_ms; returns 0 when written, -1 when the time ran out (the caller
 * then ends without them), WRITER_NONE when this process has no writer. */
#define WRITER_NONE (-2)
int writer_final_write(int timeout_ms);

#endif

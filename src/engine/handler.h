/*
 * handler.h - the SIGTRAP handler that serves both samples and traps.
 */
#ifndef WASP_HANDLER_H
#define WASP_HANDLER_H

#include <signal.h>
#include "engine.h"
#include "sampler.h"

/* Installs the handler (normal context), remembering the previous one so
 * SIGTRAPs that are not ours are passed on. Returns 0 or -1 (errno). */
int handler_install(const wasp_options *o, const engine_frontend *fe, const sampler *s);

/* Whether wasp's handler holds SIGTRAP (installed, not taken back). */
int handler_owns_sigtrap(void);

/* The program's own SIGTRAP disposition, which wasp's handler stands in
 * front of: old receives what the program set last (or what was there
 * before wasp), act (if not NULL) becomes it. Its traps are passed to it as
 * the kernel would. Returns -1 when wasp does not hold SIGTRAP: the caller
 * then applies act for real. Async-signal-safe. */
int handler_program_action(const struct sigaction *act, struct sigaction *old);

/* Whether SIGTRAP's real disposition is still wasp's handler (a raw
 * rt_sigaction system call can take it). Normal context. */
int handler_still_installed(void);

/* Starts a new epoch: see engine_new_epoch. Async-signal-safe. */
void handler_new_epoch(void);

#endif

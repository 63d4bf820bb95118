/*
 * handler.h - the SIGTRAP handler that serves both samples and traps.
 */
#ifndef WASP_HANDLER_H
#define WASP_HANDLER_H

#include "engine.h"
#include "sampler.h"

/* Installs the handler (normal context), remembering the previous one so
 * SIGTRAPs that are not ours are passed on. Returns 0 or -1 (errno). */
int handler_install(const wasp_options *o, const engine_frontend *fe, const sampler *s);

/* Starts a new epoch: see engine_new_epoch. Async-signal-safe. */
void handler_new_epoch(void);

#endif

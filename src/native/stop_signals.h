/*
 * stop_signals.h - profiles survive SIGINT, SIGTERM and SIGHUP in native
 * programs (see stop_signals.c).
 */
#ifndef WASP_STOP_SIGNALS_H
#define WASP_STOP_SIGNALS_H

/* Once the engine and its writer (writer.h) run: catches those of the
 * signals left at their default action. A forked child inherits the
 * handlers; its own writer serves them. */
void stop_signals_start(void);
/* Normal context: the default action back wherever wasp's handler is still
 * installed (the process will no longer let wasp write on a stop signal). */
void stop_signals_stop(void);

#endif

/*
 * stop_signals.h - profiles survive SIGINT, SIGTERM and SIGHUP in native
 * programs (see stop_signals.c).
 */
#ifndef WASP_STOP_SIGNALS_H
#define WASP_STOP_SIGNALS_H

/* Once the engine runs: catches those of the signals left at their default
 * action. */
void stop_signals_start(void);

/* In a forked child: a watcher of its own. */
void stop_signals_after_fork_child(void);

#endif

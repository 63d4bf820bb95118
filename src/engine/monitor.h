/*
 * monitor.h - what a sample and a trap do to a thread's watches: choose an
 * access, arm a slot, absorb a primed access's own trap, detect, pair.
 *
 * Signal context: no malloc, no locks, no stdio. Everything it does to the
 * world (debug registers, reads of program memory) goes through a
 * monitor_io, so the whole sample -> arm -> trap -> detect -> pair path can
 * be driven by synthetic samples and traps in unit tests, on machines whose
 * watchpoints never fire (tests/unit/test_monitor.c).
 */
#ifndef WASP_MONITOR_H
#define WASP_MONITOR_H

#include <signal.h>
#include <stdint.h>
#include <ucontext.h>
#include "engine.h"
#include "sampler.h"
#include "thread.h"

typedef struct monitor_io {
    /* Points slot i of t at [addr, addr+len) and enables it; rw: reads
     * trap too. Returns 0 or -1. */
    int (*arm)(thread_state *t, int i, uint64_t addr, uint32_t len, int rw);
    /* Points slot i at the instruction at pc: it traps before that runs.
     * Returns 0 or -1. */
    int (*arm_code)(thread_state *t, int i, uint64_t pc);
    /* Disables slot i; no trap of it arrives after this returns. */
    void (*disarm)(thread_state *t, int i);
    /* Reads len (1-8) bytes of program memory at addr without faulting.
     * Returns 0, or -1 when the address is unreadable. */
    int (*read)(const thread_state *t, uint64_t addr, uint32_t len, uint64_t *value);
} monitor_io;

/* The real world: perf breakpoints and process_vm_readv. */
extern const monitor_io monitor_perf_io;

/* Normal context, before any signal: the settings every sample and trap
 * follow. The pointers must outlive the monitor. */
void monitor_setup(const wasp_options *o, const engine_frontend *fe, const sampler *s,
                   const monitor_io *io);

/* A sampler signal in thread t: maybe arms a watch. due_in_handler: its
 * period ended while wasp's previous handler ran (handler.c), so its pc is
 * where that handler returned to: counted and dropped. */
void monitor_sample(thread_state *t, const siginfo_t *si, ucontext_t *uc, int due_in_handler);

/* A trap of slot i in thread t: absorbs, pairs, keeps or frees the watch. */
void monitor_trap(thread_state *t, const siginfo_t *si, ucontext_t *uc, int i);

/* Starts a new epoch (a GC moved objects): watches armed before it never
 * pair after it. Async-signal-safe. */
void monitor_new_epoch(void);

#endif

/*
 * agent.h - what agent.c (JVMTI set-up, events, thread ownership) offers
 * onattach.c (a run started in a running JVM).
 */
#ifndef WASP_AGENT_H
#define WASP_AGENT_H

#include "attach_codes.h"
#include "jvm.h"

/* Starts a run: options parsed, JVMTI set up (once per process), engine
 * started. live: the JVM is running (Agent_OnAttach), not starting. 0, or
 * an AGENT_* code with a message in err. */
int agent_start(JavaVM *vm, const char *options, int live, char *err, size_t errlen);

/* Takes thread's jvm_thread out of its local storage (NULL if none): the
 * caller owns it now. */
jvm_thread *agent_take_thread(jthread thread);

/* Starts profiling thread, which was running before the run started
 * (tid, stack and JNIEnv as vmthreads.c found them), unless it is
 * profiled already; its ThreadEnd ends it. */
void agent_adopt_thread(jthread thread, JNIEnv *env, pid_t tid, uint64_t stack_lo, uint64_t stack_hi);

/* The agent's JVMTI environment (after agent_start). */
jvmtiEnv *agent_jvmti(void);

/* The calling thread is wasp's: ThreadStart must not profile it. */
void agent_mark_own_thread(void);

/* One "[wasp] ERROR ...; the JVM runs on unprofiled" line on stderr. */
void agent_report_error(const char *what);

#endif

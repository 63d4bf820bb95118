/*
 * jvm.h - the JVM front end: a JVMTI agent on top of the engine.
 */
#ifndef WASP_JVM_H
#define WASP_JVM_H

#include <jvmti.h>
#include <stdint.h>
#include "engine.h"

/* Per Java thread: what the signal handler needs to walk its stack. */
typedef struct jvm_thread {
    JNIEnv *env;
    uint64_t stack_lo, stack_hi;   /* readable stack range, for stepping out of stubs */
    thread_state *state;
} jvm_thread;

extern const engine_frontend jvm_frontend;

/* stacks.c: finds AsyncGetCallTrace in the JVM. Returns 0 or -1. */
int jvm_stacks_init(void);

/* jsymbols.c: the JVMTI environment symbolization uses. */
void jvm_symbols_init(jvmtiEnv *jvmti);
void jvm_symbolize(frame_key f, int leaf, prof_frame *out);

#endif

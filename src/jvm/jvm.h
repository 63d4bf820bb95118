/*
 * jvm.h - the JVM front end: a JVMTI agent on top of the engine.
 */
#ifndef WASP_JVM_H
#define WASP_JVM_H

#include <jvmti.h>
#include <stdint.h>
#include <sys/types.h>
#include "engine.h"

/* Per Java thread: what the signal handler needs to walk its stack. */
typedef struct jvm_thread {
    JNIEnv *env;
    pid_t tid;                     /* for reading its stack through the kernel */
    uint64_t stack_lo, stack_hi;   /* its stack range, for stepping out of stubs */
    thread_state *state;
} jvm_thread;

extern const engine_frontend jvm_frontend;

/* agent.c: the capabilities both agent modes need (compiled-method events,
 * lines, source files, GC events), and setting callbacks with events on. */
int jvm_request_capabilities(jvmtiEnv *jvmti);
void jvm_each_loaded_class(jvmtiEnv *jvmti, void (*fn)(jclass));
int jvm_enable_events(jvmtiEnv *jvmti, const jvmtiEventCallbacks *cb, const jvmtiEvent *events, size_t n);

/* stacks.c: finds AsyncGetCallTrace in the JVM. Returns 0 or -1. */
int jvm_stacks_init(void);

/* jsymbols.c: the JVMTI environment symbolization uses. */
void jvm_symbols_init(jvmtiEnv *jvmti);

/* In wasp's checkpoint thread (engine.h, checkpoint_thread_begin): makes
 * it a JVM thread, which JVMTI's naming calls require, and one the agent
 * never profiles. 0 or -1. */
int jvm_attach_checkpoint_thread(void);
int jvm_symbolize(frame_key f, int leaf, prof_frame *out, int max);
/* Class.method, source file and line of (method, bci); strings malloc'd. */
void jvm_name_method(jmethodID m, int32_t bci, char **function, char **file, uint32_t *line);

/* jcode.c: the scopes of a compiled method's code (CompiledMethodLoad),
 * and its bytes and source lines for a profile. */
struct code_scope *jcode_scopes(jmethodID method, uint64_t start, uint64_t size, const void *compile_info,
                                const jvmtiAddrLocationMap *map, jint map_length, uint32_t *nscopes);
int jcode_describe(frame_key insn, prof_code *out);
size_t jcode_instruction(frame_key insn, char *buf, size_t len);

#endif

/*
 * vmthreads.h - a running Java thread's tid, stack and JNIEnv, read from
 * HotSpot's published structure layout (vmthreads.c).
 */
#ifndef WASP_VMTHREADS_H
#define WASP_VMTHREADS_H

#include <jvmti.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct vm_thread_info {
    pid_t tid;
    uint64_t stack_lo, stack_hi;
    JNIEnv *env;
} vm_thread_info;

/* Once, in a Java thread (env is its own). 0, or -1 when this JVM does not
 * publish what is needed (not HotSpot, or a layout wasp does not know). */
int vmthreads_init(JNIEnv *env, jvmtiEnv *jvmti);

/* What thread t is to the kernel. 0, or -1 when it is not running. */
int vmthreads_describe(JNIEnv *env, jthread t, vm_thread_info *out);

#endif

/*
 * native.h - the native front end: stack walking and symbols for compiled code.
 */
#ifndef WASP_NATIVE_H
#define WASP_NATIVE_H

#include "engine.h"

extern const engine_frontend native_frontend;

/* unwind.c, signal context: the function holding the interrupted pc, from
 * the unwind tables of the loaded objects; 0, or -1 where no table covers
 * it. The JVM front end asks it for code outside the code cache (libjvm,
 * libc, JNI libraries). */
int native_code_bounds(const ucontext_t *uc, code_bounds *out);
/* unwind.c: once, before the first thread is profiled. */
void native_unwind_init(void);
/* loader_lock.c: finds glibc's loader write lock, once, in normal context;
 * then, in signal context, whether this thread may take it (1: another
 * thread holds it, or this one is halfway through taking or freeing it). */
void loader_lock_init(void);
int loader_lock_busy(void);
/* unwind.c, pthread_atfork: before a fork, wait until no handler is inside
 * libunwind (and keep them out); after it, in parent and child, let them in. */
void native_unwind_before_fork(void);
void native_unwind_after_fork_parent(void);
void native_unwind_after_fork_child(void);

/* symbols.c: names a native frame (normal context), with the functions
 * that inlined its code: engine.h's symbolize. */
int native_symbolize(frame_key f, int leaf, prof_frame *out, int max);

/* unloads.c: the objects dlclose unloads, so that frames captured before
 * still name their code. unloads_note (dlclose_hook.c) notes the objects of
 * before that after lacks; unloads_generation (signal-safe) goes into each
 * native frame's aux; unloads_find gives the object unloaded after a frame
 * of that generation that covered pc (its index, below UNLOADS_MAX), or -1. */
#define UNLOADS_MAX 256
typedef struct loaded_object {
    char *path;
    uint64_t base, lo, hi;   /* load bias; the range its segments span */
} loaded_object;
void unloads_note(const loaded_object *before, int nb, const loaded_object *after, int na);
uint64_t unloads_generation(void);
int unloads_find(uint64_t pc, uint64_t gen, const char **path, uint64_t *base);
void unloads_after_fork_child(void);

/* preload.c: writes every profile of this process before an exec replaces
 * it (nothing when it is not profiled, or is a vfork child). */
void native_write_before_exec(void);

/* symbols.c, normal context: each(start, size, arg) for every function the
 * symbol table of the object holding pc defines (size 0: not given), the
 * object's addresses in [lo, hi). 0, or -1 when no loaded object holds pc. */
int native_function_symbols(uint64_t pc, uint64_t *lo, uint64_t *hi,
                            void (*each)(uint64_t start, uint64_t size, void *arg), void *arg);

/* func_table.c: function bounds from those symbols, for code without
 * unwind entries. func_table_bounds (signal context): 0 with the function
 * around pc, or -1 (then the table of pc's object is asked of the writer
 * thread, which builds it with func_table_serve; later samples find it). */
int func_table_bounds(uint64_t pc, uint64_t *start, uint64_t *end);
void func_table_serve(void);
void func_table_after_fork_child(void);

/* preload.c, normal context: the program is about to install a seccomp
 * filter (sandbox.c). Every profile is written and nothing of wasp's makes
 * a system call in this process after. */
void native_before_sandbox(void);

/* symbols.c, normal context: the process is about to chroot or change its
 * user, after which /proc/PID/maps or the libraries' paths may not open
 * (a chroot hides them; a process that changed users is no longer
 * dumpable, its /proc files root's): the session that names frames is
 * made now and every loaded object's file opened. */
void native_symbols_prepare(void);

/* symbols.c: in a forked child, before anything is named. */
void native_symbols_after_fork_child(void);

#endif

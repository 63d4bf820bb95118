/*
 * engine.h - what a front end (native preload, JVM agent) sees of the engine.
 *
 * The engine owns sampling, watchpoints, detection, contexts and profile
 * writing; a front end supplies how to walk and name the stack of the code it
 * runs. No JVM header is included anywhere in the engine.
 */
#ifndef WASP_ENGINE_H
#define WASP_ENGINE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <ucontext.h>
#include "cct.h"
#include "options.h"
#include "profile.h"

#define ENGINE_MAX_FRAMES 128
/* Functions one frame's code can name, inlined into one another (symbolize). */
#define ENGINE_MAX_INLINED 16

/* frame_key.aux tags. A front end that cannot name the accessing
 * instruction inside its leaf frame (Java: the leaf is a method and bci)
 * puts a pseudo-frame {pc, FRAME_INSN} first; the profile writer turns it
 * into the instruction text of the frame after it. */
#define FRAME_TAG_MASK (3ULL << 62)
#define FRAME_NATIVE (0ULL << 62)
#define FRAME_JAVA (1ULL << 62)
#define FRAME_INSN (2ULL << 62)
#define FRAME_AUX_DATA(aux) ((aux) & ~FRAME_TAG_MASK)

typedef struct code_bounds {
    uint64_t start, end;   /* the function holding a pc, or a window of a code
                            * blob around it that starts at a known boundary */
    /* The code holding them, [code_start, code_end), and what names it:
     * its decoding is kept while the name stays (code_image.h). A loaded
     * object's text: CODE_ID_TEXT + 2 x the generation of what is mapped
     * (odd); a JIT blob: its own record in the code map, whose addresses
     * later code reuses (even: a pointer); 0 keeps nothing. */
    uint64_t code_start, code_end, code_id;
} code_bounds;
#define CODE_ID_TEXT 1u

typedef struct engine_frontend {
    const char *name;
    /* What stack=auto means for this front end: STACK_INCLUDE where program
     * data lives on the stack (C's local arrays), STACK_EXCLUDE where only
     * the runtime's own traffic does (a JVM: spill slots, frames). */
    enum wasp_stack stack_default;
    /* Whether RIP-relative operands address the code's own constants (a
     * JIT's constant table: never program data) rather than globals. */
    int rip_relative_is_constant;
    /* Whether generated code keeps the runtime's own thread structure in
     * r15 (HotSpot on x86-64): accesses through it are VM state (TLAB top,
     * safepoint polls, flags), not program data. */
    int r15_is_thread;
    /* Signal context. Bounds of the code containing the interrupted pc, used
     * as a known instruction boundary for decoding. Returns 0; -1 where
     * nothing known to the front end names the code (the report counts
     * such samples: unplaced); -2 where it is known but not decoded
     * (a JVM's interpreter). */
    int (*bounds)(const ucontext_t *uc, code_bounds *out);
    /* Signal context. The calling context of the interrupted code, leaf first;
     * frame 0 must name leaf_pc (the accessing instruction). Returns the
     * number of frames, or -1. thread_data is what the front end passed to
     * engine_thread_begin. */
    int (*walk)(void *thread_data, const ucontext_t *uc, uint64_t leaf_pc, frame_key *out, int max);
    /* Normal context. Names a frame; leaf frames carry the access pc, others
     * a return address. Code the compiler inlined names several: out[0]
     * the innermost function (with the instruction, for a leaf), then each
     * one that inlined the one before, at the line of that call; at most
     * max (ENGINE_MAX_INLINED). Returns how many (at least 1). Strings are
     * malloc'd and owned by the caller. */
    int (*symbolize)(frame_key f, int leaf, prof_frame *out, int max);
    /* Normal context, optional (NULL). The generated code holding the
     * instruction of a FRAME_INSN pseudo-frame, with its bytes and source
     * lines; 0, or -1 when there is none. */
    int (*code)(frame_key insn, prof_code *out);
    /* Normal context, optional (NULL: decode the pc as it is mapped now).
     * The text of a FRAME_INSN pseudo-frame's instruction, for front ends
     * whose code can be replaced (a JIT); returns the text length. */
    size_t (*instruction)(frame_key insn, char *buf, size_t len);
    /* Normal context, optional (NULL). Run once in wasp's checkpoint
     * thread before its first checkpoint, to make it a thread symbolize
     * may be called from (a JVM attaches it); 0, or -1: no checkpoints. */
    int (*checkpoint_thread_begin)(void);
} engine_frontend;

typedef struct thread_state thread_state;

/* Once per run (a process has one, or one per `wasp attach`). Returns 0,
 * or -1 with a message naming the fix. */
int engine_init(const wasp_options *o, const engine_frontend *fe, char *err, size_t errlen);

/* The stack of a profiled thread, [lo, hi), as found when it began (0, 0
 * if unknown). */
void engine_thread_stack(const thread_state *t, uint64_t *lo, uint64_t *hi);

/* True between a successful engine_init and engine_shutdown. */
int engine_active(void);

/* True when active and the caller is the process the engine belongs to:
 * false in a vfork()ed child, which shares the parent's memory. */
int engine_owns_process(void);

/* In the new thread itself: start sampling it. NULL if it cannot be profiled
 * (the reason is reported once). thread_data goes back to the front end's
 * walk (e.g. the JNIEnv of a Java thread). */
thread_state *engine_thread_begin(void *thread_data);

/* Normal context, any thread of the process: start sampling thread tid,
 * which was running before the engine started (a JVM wasp attached to).
 * Its stack is [stack_lo, stack_hi) (0, 0 if unknown); it gets no signal
 * stack of wasp's. NULL if it cannot be profiled. */
thread_state *engine_thread_adopt(pid_t tid, void *thread_data, uint64_t stack_lo, uint64_t stack_hi);

/* Starts a new epoch (paper §5.3): watches armed before it never produce a
 * pair after it. The JVM calls it when a GC starts, since objects move.
 * Async-signal-safe. */
void engine_new_epoch(void);

/* Normal context, once the front end can name frames from a thread of
 * wasp's own (the JVM: at VMInit). Starts the checkpoint thread when the
 * flush option asks for one (checkpoint.h); says so once if it cannot. */
void engine_checkpoints_start(void);

/* In the ending thread itself: stop, write its profile, free its state. */
void engine_thread_end(thread_state *t);

/* At process exit, or when an attached run ends, from any thread: stop
 * every thread, write every profile. A later engine_init starts a new run
 * (a new directory) in the same process. */
void engine_shutdown(void);
/* Normal context, after engine_shutdown: the process is about to limit its
 * own system calls (a seccomp filter), so nothing of wasp's may make one in
 * it again. Records that in the manifest and stops the guardian. */
void engine_sandboxed(void);
/* Normal context: the process is about to take euid (setuid and kin). A
 * root process dropping its privileges hands its pid directory and
 * manifest to that user, so that its profiles can still be written. */
void engine_before_setuid(uid_t euid);

/* Normal context, once per process (after fork, in the child too): starts
 * the process's guardian (guardian.h), which writes what engine_shutdown
 * would have, should the process end without it: a raw exit_group (Go),
 * SIGKILL. Only for front ends that name frames without the runtime alive
 * (native: a JVM's names need JVMTI). */
void engine_guard(void);

/* Before an exec, after the final write: the guardian stops (guardian_stop). */
void engine_unguard(void);

/* After engine_shutdown, from any thread: close the events of a thread
 * that lives on and free its state (its profile is written already). The
 * caller owns t: its thread must not call engine_thread_end on it too. */
void engine_thread_release(thread_state *t);

/* Normal context. Every descriptor wasp holds counts against half of
 * `ulimit -n`, so the program never meets EMFILE because of us: take n
 * (0, or -1 with one warning per process when over) and give them back. */
int engine_fd_budget_take(int n);
void engine_fd_budget_give(int n);

/* Normal context. A detached thread of wasp's own (the native writer,
 * the checkpoint thread): never profiled, every signal blocked. 0, or -1
 * with errno set. */
int engine_spawn_thread(void *(*fn)(void *), size_t stack_size);

/* In the child after fork(): forget the parent's threads, profile this one. */
thread_state *engine_after_fork_child(void *thread_data);

#endif

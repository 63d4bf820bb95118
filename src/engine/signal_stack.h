/*
 * signal_stack.h - the stack wasp gives a thread's signal handler, and the
 * thread's last write run on it. Normal context only.
 */
#ifndef WASP_SIGNAL_STACK_H
#define WASP_SIGNAL_STACK_H

#include "thread.h"

/* A stack of ALTSTACK_SIZE bytes, its lowest page a guard; NULL when out
 * of memory. */
void *signal_stack_map(void);

/* Gives it back: kept for the next thread, or unmapped. */
void signal_stack_unmap(void *stack);

/* In the thread itself: installs a stack of wasp's (t->altstack) unless
 * the thread has one of its own. */
void signal_stack_give(thread_state *t);

/* In the thread itself, once no handler of ours can run in it: takes
 * wasp's stack back unless the program installed its own since. */
void signal_stack_take(thread_state *t);

/* In a forked child: the kept stacks' lock may have been held by a
 * parent's thread that did not come along. */
void signal_stack_after_fork_child(void);

/* Runs fn(t) on t's signal stack when the calling thread's own stack has
 * little room left, else where it stands. */
void signal_stack_run(thread_state *t, void (*fn)(thread_state *t));

#endif

/*
 * stubstep.h - stepping out of a JVM code-cache stub (arraycopy,
 * intrinsics) to its caller, where AsyncGetCallTrace gives no trace, so the
 * access is attributed to the Java frame that called the stub.
 *
 * Signal context: no malloc, no locks, no stdio. %rsp and %rbp come from
 * the interrupted context, and %rbp is a general register in C2 code, so
 * either may point anywhere inside the thread's stack range — including
 * HotSpot's guard zones (PROT_NONE pages at its low end) — or outside it:
 * the stack is read only through the kernel (memread.h), never directly.
 */
#ifndef WASP_STUBSTEP_H
#define WASP_STUBSTEP_H

#include <stdint.h>
#include <sys/types.h>
#include <ucontext.h>

typedef struct stub_stack {
    pid_t tid;                /* the interrupted thread, for memread */
    uint64_t lo, hi;          /* its stack, [lo, hi); 0, 0 when unknown */
} stub_stack;

/* The caller of a frameless stub, by the return address on top of the
 * stack: rip becomes the return address minus one (inside the call, whose
 * debug record names the call's own scope) and rsp pops it. Returns 0, or
 * -1 with uc untouched when the stack does not read or the return address
 * is not JVM code. */
int stub_step_by_stack_top(const stub_stack *s, ucontext_t *uc);

/* The caller of a stub that keeps a frame pointer: [rbp] is the saved rbp,
 * [rbp+8] the return address. Same contract. */
int stub_step_by_frame_pointer(const stub_stack *s, ucontext_t *uc);

#endif

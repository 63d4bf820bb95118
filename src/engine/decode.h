/*
 * decode.h - find the memory access an instruction made (Zydis).
 *
 * Runs in signal context: no malloc, no locks, no stdio. A timer sample or a
 * data-breakpoint trap lands right AFTER the accessing instruction, so the
 * usual question is "which instruction ends at rip?". x86 cannot be decoded
 * backwards, so we decode forward from a known boundary (the function start
 * from unwind info) and cache the answer per rip in a lock-free table.
 */
#ifndef WASP_DECODE_H
#define WASP_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>
#include "access.h"
#include "drops.h"

/* Once per process, before any handler can run. Returns 0 or -1. */
int decode_init(void);

/*
 * The access made by the instruction that ends exactly at rip, which lies in
 * the function [func_start, func_end). Registers come from uc (post-access
 * state). Returns DROP_NONE and fills *out, or the reason it could not.
 * Rejects: rip a branch target inside the function, the instruction having
 * overwritten its own base/index register, no explicit memory operand.
 */
enum drop_reason decode_access_before(uint64_t rip, uint64_t func_start, uint64_t func_end,
                                      const ucontext_t *uc, mem_access *out);

/* The access the instruction AT rip is about to make (pre-access registers). */
enum drop_reason decode_access_at(uint64_t rip, const ucontext_t *uc, mem_access *out);

/* Same as decode_access_at but from explicit bytes and registers: the pure
 * core both functions use, exposed for unit tests. regs indexed by REG_* of
 * <sys/ucontext.h>; fs_base/gs_base added for FS:/GS: operands. */
enum drop_reason decode_access_bytes(const uint8_t *code, size_t len, uint64_t pc,
                                     const greg_t *regs, uint64_t fs_base, uint64_t gs_base,
                                     int post_state, mem_access *out);

/* AT&T text of the instruction at pc ("movq %rax, (%rdx)"); not signal-safe.
 * Returns the length written (0 if it does not decode). */
size_t decode_format(uint64_t pc, int intel_syntax, char *buf, size_t len);

#endif

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

typedef struct code_image code_image;   /* code_image.h */

/* Once per process, before any handler can run. Returns 0 or -1. */
int decode_init(void);

/*
 * The access made by the instruction that ends exactly at rip, which lies in
 * the function [func_start, func_end) (or a window of a code blob, from a
 * known boundary), read from img where it holds that code (code_image.h;
 * NULL: decoded). Registers come from uc (post-access
 * state). Returns DROP_NONE and fills *out, or the reason it could not.
 * Rejects: the instruction having overwritten its own base/index register,
 * no explicit memory operand. At rip a branch target inside the function
 * the instruction may not have run: out->at_target says so, and the caller
 * takes it only if it touched the bytes whose breakpoint fired (locate.c).
 */
enum drop_reason decode_access_before(uint64_t rip, uint64_t func_start, uint64_t func_end, const code_image *img,
                                      const ucontext_t *uc, mem_access *out);

/* The cached answer of decode_access_before for rip, when there is one:
 * returns 1 and sets *reason (and *out), or 0 when the caller must find the
 * function bounds and call decode_access_before. Saves the bounds lookup,
 * the costliest step, on every sample or trap at a pc seen before. */
int decode_access_before_cached(uint64_t rip, const ucontext_t *uc, mem_access *out,
                                enum drop_reason *reason);

/*
 * The access a timer sample at rip takes: one drawn uniformly (candidate
 * draw mod n, in code order) from the n accesses of the wanted kind
 * (ACCESS_STORE: any store; ACCESS_LOAD: a pure load) in rip's region, so
 * that within a region each access is equally likely per execution
 * (decode_choose.c says why). A region is straight-line code: from the
 * last call, return, jump or backward branch before rip, or loop head (a
 * back edge's target) at or before it, to the next (conditional forward
 * branches and other branch targets inside are fine), less the if arms
 * inside it, which are regions of their own (decode_arm.c), drawn
 * from in fixed parts of at most 64 instructions and 256 bytes. An access
 * behind rip with a branch target between them is deferred and guarded
 * (out->past_target). When the registers hold the drawn access's
 * address now, *out is complete: out->ahead if it has not run yet.
 * Otherwise out->deferred is set, out->addr is 0, and a code breakpoint at
 * out->pc must take the address when it runs. Regions are cached per rip;
 * img as for decode_access_before.
 */
enum drop_reason decode_access_sampled(uint64_t rip, uint64_t func_start, uint64_t func_end, const code_image *img,
                                       uint8_t want, uint64_t draw, const ucontext_t *uc, mem_access *out);

/* Cached answer of decode_access_sampled: 1 with *reason set, or 0. */
int decode_access_sampled_cached(uint64_t rip, uint8_t want, uint64_t draw, const ucontext_t *uc,
                                 mem_access *out, enum drop_reason *reason);

/* For a trap where no instruction boundary is known (the interpreter, code
 * without unwind info): the instruction of length k (1..15) that ends at rip
 * and touches [lo, hi), the watched bytes. Knowing the address makes the
 * backward guess safe: a wrong split of the bytes would not hit it. */
enum drop_reason decode_access_ending_at(uint64_t rip, const ucontext_t *uc, uint64_t lo, uint64_t hi,
                                         mem_access *out);

/* A trap inside a rep string instruction (pc still AT it): the element it
 * just accessed, when that overlaps [lo, hi). */
enum drop_reason decode_string_in_progress(uint64_t rip, const ucontext_t *uc, uint64_t lo, uint64_t hi,
                                           mem_access *out);

/* The access the instruction AT rip is about to make (pre-access registers). */
enum drop_reason decode_access_at(uint64_t rip, const ucontext_t *uc, mem_access *out);

/* Same as decode_access_at but from explicit bytes and registers: the pure
 * core both functions use, exposed for unit tests. regs indexed by REG_* of
 * <sys/ucontext.h>; fs_base/gs_base added for FS:/GS: operands. */
enum drop_reason decode_access_bytes(const uint8_t *code, size_t len, uint64_t pc,
                                     const greg_t *regs, uint64_t fs_base, uint64_t gs_base,
                                     int post_state, mem_access *out);

/* Text of the instruction at the start of code (len bytes) as if it were at
 * pc; for reports that disassemble code saved in a profile. Sets *insn_len
 * (0 when the bytes do not decode) and returns the text length. */
size_t decode_format_bytes(const uint8_t *code, size_t len, uint64_t pc, int intel_syntax,
                           char *buf, size_t buflen, size_t *insn_len);

/* AT&T text of the instruction at pc ("movq %rax, (%rdx)"); not signal-safe.
 * Returns the length written (0 if it does not decode). */
size_t decode_format(uint64_t pc, int intel_syntax, char *buf, size_t len);

#endif

/*
 * fpness.h - whether the value a memory access moves is floating point.
 *
 * The detector compares FP values approximately (paper §4) and everything
 * else exactly. The move alone does not say what the data is: gcc stores
 * integer vectors with movaps (element type "float") because it is shorter
 * than movdqa, and a loop storing changing integers read as floats came out
 * 99% "approximately silent". So the answer comes from what made the value
 * (a store's producer) or what uses it (a load's consumer), from the move
 * only where the move is unambiguous (movsd, movss, movapd, vmovupd, x87,
 * FP arithmetic with a memory operand), and otherwise it is integer: exact
 * comparison only. Decoder-internal; signal context (no malloc, no locks).
 */
#ifndef WASP_FPNESS_H
#define WASP_FPNESS_H

#include "decode_internal.h"

/* The move's own answer: ACCESS_F32/F64 when its memory operand is FP and
 * the instruction is not one compilers use for any data (movaps, movups,
 * movdqa, movq, ...), else ACCESS_INT. */
uint8_t fpness_of_move(const decode_insn *d, const ZydisDecodedOperand *m);

/* The answer with context, for the access d at pc: a store of a vector
 * register through a typeless move takes the class of the instruction that
 * last wrote that register among run[0..n) (the starts of the instructions
 * that ran before pc in its straight-line run, oldest first), following
 * register copies; a typeless load takes that of the first instruction
 * after pc that uses the loaded register, up to the first branch. A zeroing
 * idiom (pxor x,x), a producer outside the run or no typed consumer: INT. */
uint8_t fpness_of(const decode_insn *d, uint64_t pc, const uint64_t *run, unsigned n);

#endif

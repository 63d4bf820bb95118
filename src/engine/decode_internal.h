/*
 * decode_internal.h - what decode.c shares with decode_sweep.c.
 *
 * Signal-safe helpers; not for use outside the decoder.
 */
#ifndef WASP_DECODE_INTERNAL_H
#define WASP_DECODE_INTERNAL_H

#include <Zydis/Zydis.h>
#include "decode.h"
#include "code_image.h"

#define DECODE_MAX_LEN 15u           /* architectural x86 instruction limit */
#define DECODE_SWEEP_MAX (64u * 1024u) /* bound on work per uncached sample */
#define DECODE_PAGE 4096u            /* smallest x86-64 page: a safe read bound */

typedef struct decode_insn {
    ZydisDecodedInstruction in;
    ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
} decode_insn;

extern ZydisDecoder decode_decoder;

int decode_is_ready(void);
ZyanStatus decode_full(const void *code, size_t len, decode_insn *d);
/* The instruction at pc, without operands, read no further than end:
 * what sweeps need (length, category, branch displacement). */
int decode_insn_within(uint64_t pc, uint64_t end, ZydisDecodedInstruction *in);
/* ucontext greg index of a GPR of any width, -1 if it is not a GPR. */
int decode_greg(ZydisRegister r);
/* Decodes at pc without a known end, reading past pc's page only when the
 * instruction really crosses it. */
ZyanStatus decode_read_at(uint64_t pc, decode_insn *d);
/* The 64-bit register enclosing r (eax -> rax), or NONE. */
ZydisRegister decode_widest(ZydisRegister r);
int decode_is_rip(ZydisRegister r);
/* stos, movs, lods, scas, cmps (with or without rep). */
int decode_is_string(const decode_insn *d);
/* The same with a rep, repe or repne prefix. */
int decode_is_rep_string(const decode_insn *d);
/* The first explicit operand that really touches memory. */
enum drop_reason decode_mem_operand(const decode_insn *d, const ZydisDecodedOperand **op);
/* The access of d at pc with the registers of uc, segment bases added. */
enum drop_reason decode_live(const decode_insn *d, uint64_t pc, const ucontext_t *uc,
                             int post_state, mem_access *out);


/* decode_sweep.c. Lock-free caches of single 64-bit words, DECODE_CACHE_SLOTS
 * each, keyed by their bits 0..46 (a user-space pc) and 60..63; 0 is empty. */
#define DECODE_CACHE_BITS 16
#define DECODE_CACHE_SLOTS (1u << DECODE_CACHE_BITS)
/* The entry for key, or 0 on a miss. */
uint64_t decode_cache_lookup(uint64_t *table, uint64_t key);
/* Inserts e with compare-and-swap; gives up quietly when the neighbourhood
 * is full (the answer is just recomputed next time). */
void decode_cache_put(uint64_t *table, uint64_t e);

/* decode_sweep.c, uncached, for tests: the cache entries a trap's sweep
 * (decode_access_before) and a sample's (decode_access_sampled; *target
 * and *region_end as its target and end entries take them) give rip,
 * reading img (code_image.c; may be NULL) where it holds the code. */
uint64_t decode_sweep(uint64_t rip, uint64_t start, uint64_t end, const code_image *img);
uint64_t decode_sweep_sampled(uint64_t rip, uint64_t start, uint64_t end, const code_image *img, uint8_t want,
                              uint64_t key, uint64_t *target, uint64_t *region_end);

/* decode_sweep.c. Target of a direct relative branch, 0 for others. */
uint64_t decode_branch_target(const ZydisDecodedInstruction *in, uint64_t next);

/* A sampling region is drawn from in parts of at most this many
 * instructions, starting within this many bytes of the part's start
 * (decode_sweep.c): a part's start is one byte back from rip in the cache. */
#define DECODE_PART_INSNS 64u
#define DECODE_PART_BYTES 256u

/* decode_arm.c. Where the arm that in (a conditional branch, next after
 * it) jumps over ends, or 0 when it jumps over none (decode_arm.c says
 * what is one); *else_at: where an else arm skipped with it starts, or 0. */
uint64_t decode_arm_end(const ZydisDecodedInstruction *in, uint64_t next, uint64_t *else_at);

/* decode_choose.c. Whether in (at pc, next after it) is the last
 * instruction of a sampling region: a call, return, jump, system call, or
 * a backward branch (a loop's back edge). */
int decode_ends_region(const ZydisDecodedInstruction *in, uint64_t pc, uint64_t next);
/* How many accesses of the wanted kind the region starting at start has
 * (ending before end, when not 0: an if's arm, decode_sweep.c). */
unsigned decode_region_candidates(uint64_t start, uint64_t end, uint8_t want);
/* Whether in, at pc, branching to target, makes target a loop head: a
 * conditional backward branch (a back edge). Targets of jumps are not:
 * C2 enters its loops past the head and its slow paths jump back into
 * them. */
int decode_is_loop_head(const ZydisDecodedInstruction *in, uint64_t pc, uint64_t target);
/* The access a sample at rip takes from the region starting at start:
 * candidate (draw mod n) of its n, in code order (decode_access_sampled).
 * target: the last branch target in (start, rip], 0 for none; end: where
 * an if's arm ends the region, 0 for none. */
enum drop_reason decode_choose(uint64_t start, uint64_t target, uint64_t end, uint64_t rip, uint8_t want,
                               uint64_t draw, const ucontext_t *uc, mem_access *out);

#endif

/*
 * decode_arm.c - an if's arms: code that a pass through a sampling region
 * runs whole or not at all.
 *
 * A pair counts its region's accesses per instruction as if each pass ran
 * the region whole (decode_choose.c). An arm that most passes skip broke
 * that: a loop with a never-taken 40-instruction arm before its store (7
 * of its 47 instructions run per pass) gave the store 7/47 of its weight
 * (tests/e2e bias_arm: 84.1% silent for 50%). So a region leaves its arms
 * out: their instructions and accesses are not its own, and an arm is a
 * region of its own, entered when it runs. Cutting the region at the arm
 * instead (three regions: before, arm, after) would make the split of
 * samples between the code before and after it depend on where the timer
 * lands inside the loop, which the region exists to make irrelevant (a
 * first try read 63%, with a fixed sampling period).
 *
 * An arm is what a conditional forward branch jumps over when the code up
 * to its target is straight: no return, indirect jump, interrupt or
 * backward branch, at most DECODE_ARM_MAX_BYTES. Out-of-line code (C2's
 * slow paths and uncommon traps past the loop's back edge or the return;
 * gcc's cold code in another function) is not an arm: a never-taken check
 * jumps there, and what follows the check still runs every pass. When the
 * arm ends with a forward jmp over straight code (if/else), the else arm
 * is skipped with it.
 *
 * Signal context: decodes only.
 */
#include "decode_internal.h"

#define DECODE_ARM_MAX_BYTES 512u

/* Whether [from, to) decodes straight to `to` with nothing that leaves the
 * pass; *jmp_to: the target of a forward jmp ending it, else 0. */
static int straight_to(uint64_t from, uint64_t to, uint64_t *jmp_to)
{
    uint64_t pc = from;
    *jmp_to = 0;
    if (to <= from || to - from > DECODE_ARM_MAX_BYTES)
        return 0;
    while (pc < to) {
        ZydisDecodedInstruction in;
        if (!decode_insn_within(pc, to, &in))
            return 0;   /* undecodable, or an instruction across `to` */
        uint64_t next = pc + in.length, target = decode_branch_target(&in, next);
        ZydisInstructionCategory cat = in.meta.category;
        int jump = cat == ZYDIS_CATEGORY_COND_BR || cat == ZYDIS_CATEGORY_UNCOND_BR;
        if (cat == ZYDIS_CATEGORY_RET || cat == ZYDIS_CATEGORY_INTERRUPT || (jump && (!target || target <= pc)))
            return 0;
        *jmp_to = cat == ZYDIS_CATEGORY_UNCOND_BR && target > next ? target : 0;
        pc = next;
    }
    return 1;
}

/* The arm's end, computed: decodes up to twice DECODE_ARM_MAX_BYTES. */
static uint64_t arm_end(uint64_t next, uint64_t to)
{
    uint64_t jmp_to, unused;
    if (!to || to <= next || !straight_to(next, to, &jmp_to))
        return 0;
    if (jmp_to > to && straight_to(to, jmp_to, &unused))
        return jmp_to;
    return to;
}

/* Cached per branch, as every sample in a region asks of each branch in it
 * (a C2 loop's checks each decoded up to its back edge: tens of
 * microseconds a sample). An entry: bits 0..46 the branch's pc, 48..57 the
 * arm's end past the branch, bit 58 set when it jumps over an arm. */
static uint64_t decode_arm_cache[DECODE_CACHE_SLOTS];
#define ARM_LEN_SHIFT 48
#define ARM_FOUND (1ull << 58)

uint64_t decode_arm_end(const ZydisDecodedInstruction *in, uint64_t next, uint64_t *else_at)
{
    uint64_t pc = next - in->length, to, end, e;
    *else_at = 0;
    if (in->meta.category != ZYDIS_CATEGORY_COND_BR || (pc >> 47))
        return 0;
    to = decode_branch_target(in, next);
    e = decode_cache_lookup(decode_arm_cache, pc);
    if (e) {
        end = e & ARM_FOUND ? next + ((e >> ARM_LEN_SHIFT) & 0x3ff) : 0;
    } else {
        end = arm_end(next, to);
        /* An arm ends at most 2 x 512 bytes past its branch: 10 bits. */
        if (end && end - next <= 0x3ff)
            decode_cache_put(decode_arm_cache, pc | ((end - next) << ARM_LEN_SHIFT) | ARM_FOUND);
        else if (!end)
            decode_cache_put(decode_arm_cache, pc);
    }
    if (end && end != to)
        *else_at = to;
    return end;
}

/*
 * access.h - what one memory access is, as the engine sees it.
 *
 * Shared by the decoder (which fills it from a machine instruction and a
 * register context) and by the watch/detect logic (which consumes it).
 */
#ifndef WASP_ACCESS_H
#define WASP_ACCESS_H

#include <stdint.h>

enum access_kind {
    ACCESS_LOAD = 1,
    ACCESS_STORE = 2,
    ACCESS_RMW = ACCESS_LOAD | ACCESS_STORE,
};

/* Added to the wanted kind of a sampled access: accesses the look-back
 * passes over for an earlier one, because they are known not to be data
 * the profile wants (stack=exclude; a JIT's constant table). */
enum access_skip {
    ACCESS_SKIP_RSP = 0x10,   /* addressed through the stack pointer */
    ACCESS_SKIP_RIP = 0x20,   /* RIP-relative */
    ACCESS_SKIP_R15 = 0x40,   /* addressed through r15 (a runtime's thread register) */
};

/* Element type of the memory operand: lets the detector compare floating
 * point values approximately (paper §4). */
enum access_fp {
    ACCESS_INT = 0,
    ACCESS_F32 = 4,
    ACCESS_F64 = 8,
};

typedef struct mem_access {
    uint64_t pc;       /* address of the accessing instruction */
    uint64_t addr;     /* effective address, segment base included */
    uint32_t size;     /* bytes touched (1..64) */
    uint8_t insn_len;  /* length of the accessing instruction */
    uint8_t kind;      /* enum access_kind bits */
    uint8_t fp;        /* enum access_fp */
    uint8_t region_insns;  /* sampled from a region: its instructions (0: the pc's own instruction) */
    uint8_t region_cands;  /* and its accesses of the wanted kind, one of which this is */
    uint8_t element;       /* a string instruction's element size (size spans the next elements) */
    uint8_t base_rsp : 1;      /* addressed through the stack pointer */
    uint8_t rip_relative : 1;  /* addressed relative to the instruction */
    uint8_t base_r15 : 1;      /* addressed through r15 */
    uint8_t ahead : 1;         /* a sampled access that has not run yet (its watch primes) */
    uint8_t string : 1;        /* a string instruction (rep stos/movs: memset, memcpy) */
    uint8_t deferred : 1;      /* sampled, address not in the registers yet: a code breakpoint takes it */
    uint8_t touched : 1;       /* deferred although it ran behind the pc: an access since may
                                  have touched its bytes, ending its pair */
    uint8_t guarded : 1;       /* sampled ahead of the pc past a conditional branch, or behind it
                                  past a branch target: it may not run on this pass, so it counts
                                  only if it runs before the pc again */
    uint8_t past_target : 1;   /* guarded behind the pc: deferred to its next run */
    uint8_t clobbered : 1;     /* after it ran: it wrote its own base or index, so addr is 0,
                                  unknown (with DROP_ADDR_CLOBBERED; locate.c) */
    uint8_t at_target : 1;     /* found before a trap's pc that is a branch target: it ran only if
                                  control fell through to the pc (locate.c decides) */
    uint8_t loop : 1;          /* drawn from a region that starts at a loop head: the access
                                  runs again on the loop's next pass (monitor.c may take that run) */
    uint8_t unplaced : 1;      /* with DROP_NO_BOUNDARY: nothing names the code at the pc (no
                                  unwind or symbol table; engine.h, bounds) */
} mem_access;

#endif

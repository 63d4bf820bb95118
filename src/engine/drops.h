/*
 * drops.h - why a sample or a trap was not turned into data.
 *
 * Every profile records one counter per reason, so a report can say how
 * much of what the sampler saw was usable (the "measure yourself" rule).
 */
#ifndef WASP_DROPS_H
#define WASP_DROPS_H

enum drop_reason {
    DROP_NONE = 0,
    DROP_NOT_MEMORY,       /* instruction has no explicit memory operand */
    DROP_WRONG_KIND,       /* a load sampled while looking for stores, or vice versa */
    DROP_DECODE_FAILED,    /* bytes at the pc do not decode */
    DROP_BRANCH_TARGET,    /* a trap at a jump target, and the instruction before did not touch
                              the watched bytes: a jump came there (locate.c) */
    DROP_ADDR_CLOBBERED,   /* instruction overwrote its own base/index register */
    DROP_ADDR_UNKNOWN,     /* address uses a register we cannot read (e.g. VSIB) */
    DROP_NO_BOUNDARY,      /* no known instruction boundary before the pc */
    DROP_UNWIND_FAILED,    /* calling context could not be captured */
    DROP_TABLE_FULL,       /* context tree or pair table out of preallocated space */
    DROP_SPURIOUS_TRAP,    /* trap whose instruction does not touch the watched bytes */
    DROP_UNREADABLE,       /* watched/sampled memory could not be read */
    DROP_EPOCH,            /* watch armed before a GC (objects may have moved) */
    DROP_NO_RECORD,        /* PMU signal without a usable sample in the ring buffer */
    DROP_RING_LOST,        /* PMU samples lost by the kernel or superseded before the handler ran */
    DROP_INEXACT_IP,       /* PMU sample IP not an exact user-space instruction */
    DROP_STACK_PROBE,      /* access far below the stack pointer: a stack bang/probe */
    DROP_STACK,            /* access to the thread's own stack, with stack=exclude */
    DROP_RUNTIME,          /* a runtime's own state: JIT constants, the VM's thread structure */
    DROP_SKIPPED_AHEAD,    /* the access drawn ahead of the pc did not run before its bytes were touched */
    DROP_IN_HANDLER,       /* the sampling period ended inside wasp's own handler: delivered
                              as it returned, at the pc it handled, not where the program's time went */
    DROP_SKIPPED_BEHIND,   /* the access drawn behind the pc past a branch target did not run
                              before the pc ran again (decode_choose.c) */
    DROP_IN_SYSCALL,       /* ctimer: the tick came during a system call, so the signal waited
                              for its return, at a pc where no user time went (sampler_ctimer.c) */
    DROP_REASON_COUNT
};

/* Stable names used in profiles and reports ("drop.<name>"). */
static inline const char *drop_reason_name(enum drop_reason r)
{
    static const char *const names[DROP_REASON_COUNT] = {
        "none", "not_memory", "wrong_kind", "decode_failed", "branch_target",
        "addr_clobbered", "addr_unknown", "no_boundary", "unwind_failed",
        "table_full", "spurious_trap", "unreadable", "epoch",
        "no_record", "ring_lost", "inexact_ip", "stack_probe", "stack", "runtime",
        "skipped_ahead", "in_handler", "skipped_behind", "in_syscall",
    };
    return (unsigned)r < DROP_REASON_COUNT ? names[r] : "unknown";
}

#endif

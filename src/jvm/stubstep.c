/*
 * stubstep.c - stepping out of a code-cache stub to its caller (stubstep.h).
 *
 * Signal context. The range check alone is not enough: HotSpot's stack
 * guard zones are PROT_NONE pages inside [lo, hi), and C2 uses %rbp as a
 * general register, so a direct load here could fault inside wasp's
 * handler and kill the program (issue 10). Hence memread.
 */
#include "stubstep.h"

#include "codemap.h"
#include "memread.h"

static int on_stack(const stub_stack *s, uint64_t addr, uint64_t len)
{
    return addr >= s->lo && addr + len <= s->hi && addr + len > addr;
}

int stub_step_by_stack_top(const stub_stack *s, ucontext_t *uc)
{
    uint64_t sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP], ret;
    if (!on_stack(s, sp, 8) || memread(s->tid, sp, &ret, 8) < 0 || !codemap_find(ret))
        return -1;
    uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(ret - 1);
    uc->uc_mcontext.gregs[REG_RSP] = (greg_t)(sp + 8);
    return 0;
}

int stub_step_by_frame_pointer(const stub_stack *s, ucontext_t *uc)
{
    uint64_t fp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP], frame[2];   /* saved rbp, return address */
    if (!on_stack(s, fp, 16) || memread(s->tid, fp, frame, sizeof(frame)) < 0 || !codemap_find(frame[1]))
        return -1;
    uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(frame[1] - 1);
    uc->uc_mcontext.gregs[REG_RSP] = (greg_t)(fp + 16);
    uc->uc_mcontext.gregs[REG_RBP] = (greg_t)frame[0];
    return 0;
}

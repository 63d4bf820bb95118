/*
 * test_stubstep.c - stepping out of a JVM stub (src/jvm/stubstep.c) with
 * the synthetic contexts a signal can bring: %rsp and %rbp inside the
 * thread's stack range but on a PROT_NONE guard page or an unmapped page
 * (C2 uses %rbp as a general register) must give -1 and leave the context
 * alone. Before the reads went through the kernel these cases died of
 * SIGSEGV. Good stacks step to a caller in the code map.
 */
#include <sys/mman.h>
#include <unistd.h>
#include "harness.h"
#include "codemap.h"
#include "stubstep.h"

/* A fake thread stack: page 0 a guard zone (PROT_NONE), page 1 unmapped,
 * pages 2-3 readable. The stack range claims all four, as a JVM thread's
 * does (its guard zones lie inside the pthread stack). */
static char *stack;
static long page;
static stub_stack range;
static uint8_t code[256];   /* a fake JIT method the code map knows */

static void setup(void)
{
    page = sysconf(_SC_PAGESIZE);
    stack = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mprotect(stack, page, PROT_NONE);
    munmap(stack + page, page);
    range = (stub_stack){ .tid = gettid(), .lo = (uint64_t)(uintptr_t)stack,
                          .hi = (uint64_t)(uintptr_t)(stack + 4 * page) };
    codemap_init();
    codemap_add((uint64_t)(uintptr_t)code, (uint64_t)(uintptr_t)(code + sizeof(code)), CODE_JIT, 1, NULL,
                NULL, 0);
}

static uint64_t in_stack(long offset)
{
    return (uint64_t)(uintptr_t)(stack + offset);
}

static ucontext_t context(uint64_t rsp, uint64_t rbp)
{
    ucontext_t uc;
    memset(&uc, 0, sizeof(uc));
    uc.uc_mcontext.gregs[REG_RIP] = 0x1234;
    uc.uc_mcontext.gregs[REG_RSP] = (greg_t)rsp;
    uc.uc_mcontext.gregs[REG_RBP] = (greg_t)rbp;
    return uc;
}

static int untouched(const ucontext_t *uc, uint64_t rsp, uint64_t rbp)
{
    return uc->uc_mcontext.gregs[REG_RIP] == 0x1234 && (uint64_t)uc->uc_mcontext.gregs[REG_RSP] == rsp &&
           (uint64_t)uc->uc_mcontext.gregs[REG_RBP] == rbp;
}

TEST(stack_top_on_guard_page_is_dropped)
{
    ucontext_t uc = context(in_stack(page - 64), 0);
    CHECK_EQ_U(stub_step_by_stack_top(&range, &uc), (unsigned long long)-1);
    CHECK(untouched(&uc, in_stack(page - 64), 0));
}

TEST(stack_top_on_unmapped_page_is_dropped)
{
    ucontext_t uc = context(in_stack(page + 128), 0);
    CHECK_EQ_U(stub_step_by_stack_top(&range, &uc), (unsigned long long)-1);
    CHECK(untouched(&uc, in_stack(page + 128), 0));
}

TEST(frame_pointer_on_guard_page_is_dropped)
{
    ucontext_t uc = context(in_stack(3 * page), in_stack(512));
    CHECK_EQ_U(stub_step_by_frame_pointer(&range, &uc), (unsigned long long)-1);
    CHECK(untouched(&uc, in_stack(3 * page), in_stack(512)));
}

/* [rbp] readable, [rbp+8] on the next, unmapped page. */
TEST(frame_pointer_straddling_a_hole_is_dropped)
{
    ucontext_t uc = context(in_stack(3 * page), in_stack(page - 8));
    CHECK_EQ_U(stub_step_by_frame_pointer(&range, &uc), (unsigned long long)-1);
    ucontext_t uc2 = context(in_stack(3 * page), in_stack(2 * page - 8));
    CHECK_EQ_U(stub_step_by_frame_pointer(&range, &uc2), (unsigned long long)-1);
}

TEST(outside_the_stack_is_dropped)
{
    ucontext_t uc = context(8, 8);
    CHECK_EQ_U(stub_step_by_stack_top(&range, &uc), (unsigned long long)-1);
    CHECK_EQ_U(stub_step_by_frame_pointer(&range, &uc), (unsigned long long)-1);
    ucontext_t top = context(range.hi - 4, range.hi - 8);   /* the last 8 bytes would cross hi */
    CHECK_EQ_U(stub_step_by_stack_top(&range, &top), (unsigned long long)-1);
    CHECK_EQ_U(stub_step_by_frame_pointer(&range, &top), (unsigned long long)-1);
}

TEST(steps_by_stack_top_to_jvm_code)
{
    uint64_t *sp = (uint64_t *)(stack + 3 * page);
    sp[0] = (uint64_t)(uintptr_t)(code + 40);
    ucontext_t uc = context((uint64_t)(uintptr_t)sp, 0);
    CHECK_EQ_U(stub_step_by_stack_top(&range, &uc), 0);
    CHECK_EQ_U(uc.uc_mcontext.gregs[REG_RIP], (uint64_t)(uintptr_t)(code + 39));
    CHECK_EQ_U(uc.uc_mcontext.gregs[REG_RSP], (uint64_t)(uintptr_t)(sp + 1));
}

TEST(steps_by_frame_pointer_to_jvm_code)
{
    uint64_t *fp = (uint64_t *)(stack + 2 * page + 256);
    fp[0] = 0xfeed;
    fp[1] = (uint64_t)(uintptr_t)(code + 100);
    ucontext_t uc = context(in_stack(2 * page), (uint64_t)(uintptr_t)fp);
    CHECK_EQ_U(stub_step_by_frame_pointer(&range, &uc), 0);
    CHECK_EQ_U(uc.uc_mcontext.gregs[REG_RIP], (uint64_t)(uintptr_t)(code + 99));
    CHECK_EQ_U(uc.uc_mcontext.gregs[REG_RSP], (uint64_t)(uintptr_t)(fp + 2));
    CHECK_EQ_U(uc.uc_mcontext.gregs[REG_RBP], 0xfeed);
}

TEST(return_address_outside_jvm_code_is_dropped)
{
    uint64_t *sp = (uint64_t *)(stack + 3 * page);
    sp[0] = 0xdead0000;
    ucontext_t uc = context((uint64_t)(uintptr_t)sp, 0);
    CHECK_EQ_U(stub_step_by_stack_top(&range, &uc), (unsigned long long)-1);
    CHECK(untouched(&uc, (uint64_t)(uintptr_t)sp, 0));
}

TEST(unknown_stack_is_dropped)
{
    stub_stack none = { .tid = gettid() };
    uint64_t *sp = (uint64_t *)(stack + 3 * page);
    sp[0] = (uint64_t)(uintptr_t)(code + 40);
    ucontext_t uc = context((uint64_t)(uintptr_t)sp, 0);
    CHECK_EQ_U(stub_step_by_stack_top(&none, &uc), (unsigned long long)-1);
}

int main(void)
{
    setup();
    RUN(stack_top_on_guard_page_is_dropped);
    RUN(stack_top_on_unmapped_page_is_dropped);
    RUN(frame_pointer_on_guard_page_is_dropped);
    RUN(frame_pointer_straddling_a_hole_is_dropped);
    RUN(outside_the_stack_is_dropped);
    RUN(steps_by_stack_top_to_jvm_code);
    RUN(steps_by_frame_pointer_to_jvm_code);
    RUN(return_address_outside_jvm_code_is_dropped);
    RUN(unknown_stack_is_dropped);
    return HARNESS_EXIT();
}

/*
 * test_decode.c - decode.c against hand-assembled instructions: operand
 * kind/size/fp, effective addresses (SIB, RIP-relative, FS/GS, addr32),
 * post-state clobbering, previous-instruction recovery with its cache, and
 * the formatter.
 */
#include "decode.h"
#include "harness.h"
#include "locate.h"
#include "watch.h"

#include <asm/prctl.h>
#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PAGE 4096u

static greg_t regs[NGREG];

static void regs_clear(void)
{
    memset(regs, 0, sizeof regs);
}

/* decode_access_bytes on a literal byte list, pc fixed at 0x400000. */
#define BYTES(post, out, ...) \
    bytes_at(0x400000, (const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ }), \
             post, out)

static enum drop_reason bytes_at(uint64_t pc, const uint8_t *b, size_t n, int post, mem_access *out)
{
    memset(out, 0xa5, sizeof *out);
    return decode_access_bytes(b, n, pc, regs, 0x7f0000001000ull, 0x7f0000900000ull, post, out);
}

static void check_access(const mem_access *a, uint64_t addr, uint32_t size, int kind, int fp)
{
    CHECK_EQ_U(a->addr, addr);
    CHECK_EQ_U(a->size, size);
    CHECK_EQ_U(a->kind, kind);
    CHECK_EQ_U(a->fp, fp);
}

/* One page of code, the rest int3, mapped read+exec like real text. Never
 * unmapped: the decode cache is keyed by address and lives for the process. */
static uint8_t *map_code(const uint8_t *b, size_t n)
{
    uint8_t *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    memset(p, 0xcc, PAGE);
    memcpy(p, b, n);
    mprotect(p, PAGE, PROT_READ | PROT_EXEC);
    return p;
}

static ucontext_t uc_from_regs(void)
{
    ucontext_t uc;
    memset(&uc, 0, sizeof uc);
    memcpy(uc.uc_mcontext.gregs, regs, sizeof regs);
    return uc;
}

static uint64_t fs_base_now(void)
{
    uint64_t v;
    __asm__("mov %%fs:0, %0" : "=r"(v)); /* glibc TCB self pointer == FS base */
    return v;
}

TEST(store_simple)
{
    mem_access a;
    regs_clear();
    regs[REG_RDX] = 0x1000;
    CHECK_EQ_U(BYTES(0, &a, 0x48, 0x89, 0x02), DROP_NONE); /* mov %rax,(%rdx) */
    check_access(&a, 0x1000, 8, ACCESS_STORE, ACCESS_INT);
    CHECK_EQ_U(a.pc, 0x400000);
    CHECK_EQ_U(a.insn_len, 3);
}

/* memset and memcpy: rep stos/movs, hidden operands at rdi (and rsi). */
TEST(string_instructions)
{
    mem_access a;
    regs_clear();
    regs[REG_RDI] = 0x1000;
    regs[REG_RSI] = 0x3000;
    regs[REG_RCX] = 100;
    /* Ahead of rep stosb: the bytes it is about to fill, up to 64. */
    CHECK_EQ_U(BYTES(0, &a, 0xf3, 0xaa), DROP_NONE);
    check_access(&a, 0x1000, 64, ACCESS_STORE, ACCESS_INT);
    CHECK(a.string);
    regs[REG_RCX] = 3;
    CHECK_EQ_U(BYTES(0, &a, 0xf3, 0x48, 0xab), DROP_NONE);   /* rep stosq: 3 x 8 bytes */
    check_access(&a, 0x1000, 24, ACCESS_STORE, ACCESS_INT);
    regs[REG_RCX] = 0;
    CHECK_EQ_U(BYTES(0, &a, 0xf3, 0xaa), DROP_NOT_MEMORY);   /* nothing left to do */
    /* rep movsb stores at rdi. */
    regs[REG_RCX] = 1;
    CHECK_EQ_U(BYTES(0, &a, 0xf3, 0xa4), DROP_NONE);
    check_access(&a, 0x1000, 1, ACCESS_STORE, ACCESS_INT);
    /* After an element (a trap between iterations, or the last one): the
     * element just written is one step back, or forward when DF is set. */
    CHECK_EQ_U(BYTES(1, &a, 0xf3, 0x48, 0xab), DROP_NONE);
    check_access(&a, 0x1000 - 8, 8, ACCESS_STORE, ACCESS_INT);
    regs[REG_EFL] = 0x400;
    CHECK_EQ_U(BYTES(1, &a, 0xf3, 0x48, 0xab), DROP_NONE);
    check_access(&a, 0x1000 + 8, 8, ACCESS_STORE, ACCESS_INT);
    regs[REG_EFL] = 0;
    /* lodsb only loads, at rsi. */
    CHECK_EQ_U(BYTES(0, &a, 0xac), DROP_NONE);
    check_access(&a, 0x3000, 1, ACCESS_LOAD, ACCESS_INT);
}

TEST(load_sib)
{
    mem_access a;
    regs_clear();
    regs[REG_RBX] = 0x2000;
    regs[REG_RCX] = 3;
    CHECK_EQ_U(BYTES(0, &a, 0x8b, 0x44, 0x8b, 0x10), DROP_NONE); /* mov 0x10(%rbx,%rcx,4),%eax */
    check_access(&a, 0x2000 + 12 + 0x10, 4, ACCESS_LOAD, ACCESS_INT);
    CHECK_EQ_U(a.insn_len, 4);
    regs[REG_R11] = 0x5000;
    regs[REG_R15] = 2;
    CHECK_EQ_U(BYTES(0, &a, 0x43, 0x8b, 0x04, 0xfb), DROP_NONE); /* mov (%r11,%r15,8),%eax */
    check_access(&a, 0x5010, 4, ACCESS_LOAD, ACCESS_INT);
    regs[REG_R8] = 0x6000;
    CHECK_EQ_U(BYTES(0, &a, 0x4d, 0x89, 0x08), DROP_NONE); /* mov %r9,(%r8) */
    check_access(&a, 0x6000, 8, ACCESS_STORE, ACCESS_INT);
}

TEST(rip_relative)
{
    mem_access a;
    regs_clear();
    CHECK_EQ_U(BYTES(0, &a, 0x48, 0x8b, 0x05, 0x10, 0, 0, 0), DROP_NONE); /* mov 0x10(%rip),%rax */
    check_access(&a, 0x400000 + 7 + 0x10, 8, ACCESS_LOAD, ACCESS_INT);
    /* Post state is fine: the address only depends on the pc. */
    CHECK_EQ_U(BYTES(1, &a, 0x48, 0x8b, 0x05, 0xf0, 0xff, 0xff, 0xff), DROP_NONE);
    CHECK_EQ_U(a.addr, 0x400000 + 7 - 0x10);
}

TEST(segments)
{
    mem_access a;
    regs_clear();
    /* mov %fs:0x28,%rax */
    CHECK_EQ_U(BYTES(0, &a, 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0), DROP_NONE);
    check_access(&a, 0x7f0000001000ull + 0x28, 8, ACCESS_LOAD, ACCESS_INT);
    /* mov %gs:0x10,%rax */
    CHECK_EQ_U(BYTES(0, &a, 0x65, 0x48, 0x8b, 0x04, 0x25, 0x10, 0, 0, 0), DROP_NONE);
    CHECK_EQ_U(a.addr, 0x7f0000900000ull + 0x10);
    /* An ordinary DS access gets no segment base. */
    regs[REG_RDX] = 0x1000;
    CHECK_EQ_U(BYTES(0, &a, 0x48, 0x89, 0x02), DROP_NONE);
    CHECK_EQ_U(a.addr, 0x1000);
}

TEST(addr32_wraps)
{
    mem_access a;
    regs_clear();
    regs[REG_RAX] = 0x100000010ll;
    CHECK_EQ_U(BYTES(0, &a, 0x67, 0x8b, 0x00), DROP_NONE); /* mov (%eax),%eax */
    check_access(&a, 0x10, 4, ACCESS_LOAD, ACCESS_INT);
}

TEST(float_types)
{
    mem_access a;
    regs_clear();
    regs[REG_RDI] = 0x3000;
    regs[REG_RSI] = 0x4000;
    CHECK_EQ_U(BYTES(0, &a, 0xf2, 0x0f, 0x11, 0x07), DROP_NONE); /* movsd %xmm0,(%rdi) */
    check_access(&a, 0x3000, 8, ACCESS_STORE, ACCESS_F64);
    CHECK_EQ_U(BYTES(0, &a, 0xf3, 0x0f, 0x10, 0x06), DROP_NONE); /* movss (%rsi),%xmm0 */
    check_access(&a, 0x4000, 4, ACCESS_LOAD, ACCESS_F32);
    /* movaps moves integer vectors too (gcc's shortest store): alone it
     * says nothing (test_fpness.c: what made the value decides). */
    CHECK_EQ_U(BYTES(0, &a, 0x0f, 0x29, 0x07), DROP_NONE); /* movaps %xmm0,(%rdi) */
    check_access(&a, 0x3000, 16, ACCESS_STORE, ACCESS_INT);
    CHECK_EQ_U(BYTES(0, &a, 0x66, 0x0f, 0x29, 0x07), DROP_NONE); /* movapd %xmm0,(%rdi) */
    check_access(&a, 0x3000, 16, ACCESS_STORE, ACCESS_F64);
    CHECK_EQ_U(BYTES(0, &a, 0xf2, 0x0f, 0x58, 0x07), DROP_NONE); /* addsd (%rdi),%xmm0 */
    check_access(&a, 0x3000, 8, ACCESS_LOAD, ACCESS_F64);
    CHECK_EQ_U(BYTES(0, &a, 0xdd, 0x07), DROP_NONE); /* fldl (%rdi) */
    check_access(&a, 0x3000, 8, ACCESS_LOAD, ACCESS_F64);
    CHECK_EQ_U(BYTES(0, &a, 0xc5, 0xfe, 0x7f, 0x07), DROP_NONE); /* vmovdqu %ymm0,(%rdi) */
    check_access(&a, 0x3000, 32, ACCESS_STORE, ACCESS_INT);
}

TEST(read_modify_write)
{
    mem_access a;
    regs_clear();
    regs[REG_RDI] = 0x3000;
    regs[REG_RDX] = 0x3100;
    CHECK_EQ_U(BYTES(1, &a, 0x01, 0x07), DROP_NONE); /* add %eax,(%rdi) */
    check_access(&a, 0x3000, 4, ACCESS_RMW, ACCESS_INT);
    CHECK_EQ_U(BYTES(1, &a, 0xf0, 0x48, 0x0f, 0xb1, 0x0a), DROP_NONE); /* lock cmpxchg %rcx,(%rdx) */
    check_access(&a, 0x3100, 8, ACCESS_RMW, ACCESS_INT);
}

TEST(post_state_clobber)
{
    mem_access a;
    regs_clear();
    regs[REG_RAX] = 0x8000;
    CHECK_EQ_U(BYTES(1, &a, 0x48, 0x8b, 0x00), DROP_ADDR_CLOBBERED); /* mov (%rax),%rax */
    CHECK_EQ_U(BYTES(0, &a, 0x48, 0x8b, 0x00), DROP_NONE);
    check_access(&a, 0x8000, 8, ACCESS_LOAD, ACCESS_INT);
    /* Writing a narrower alias of the index register clobbers it too. */
    CHECK_EQ_U(BYTES(1, &a, 0x8b, 0x0c, 0x08), DROP_ADDR_CLOBBERED); /* mov (%rax,%rcx),%ecx */
    /* push 8(%rsp) moves rsp implicitly. */
    regs[REG_RSP] = 0x7ff000;
    CHECK_EQ_U(BYTES(1, &a, 0xff, 0x74, 0x24, 0x08), DROP_ADDR_CLOBBERED);
    CHECK_EQ_U(BYTES(0, &a, 0xff, 0x74, 0x24, 0x08), DROP_NONE);
    check_access(&a, 0x7ff008, 8, ACCESS_LOAD, ACCESS_INT);
    /* Writing an unrelated register is fine. */
    regs[REG_RSI] = 0x9000;
    CHECK_EQ_U(BYTES(1, &a, 0x8b, 0x1e), DROP_NONE); /* mov (%rsi),%ebx */
    check_access(&a, 0x9000, 4, ACCESS_LOAD, ACCESS_INT);
}

TEST(not_memory)
{
    mem_access a;
    regs_clear();
    CHECK_EQ_U(BYTES(0, &a, 0x48, 0x8d, 0x04, 0x08), DROP_NOT_MEMORY); /* lea (%rax,%rcx),%rax */
    CHECK_EQ_U(BYTES(0, &a, 0x0f, 0x1f, 0x40, 0x00), DROP_NOT_MEMORY); /* nopl 0(%rax) */
    CHECK_EQ_U(BYTES(0, &a, 0x0f, 0x18, 0x08), DROP_NOT_MEMORY);       /* prefetcht0 (%rax) */
    CHECK_EQ_U(BYTES(0, &a, 0x0f, 0xae, 0x38), DROP_NOT_MEMORY);       /* clflush (%rax) */
    CHECK_EQ_U(BYTES(0, &a, 0x50), DROP_NOT_MEMORY);                   /* push %rax */
    CHECK_EQ_U(BYTES(0, &a, 0xc3), DROP_NOT_MEMORY);                   /* ret */
    CHECK_EQ_U(BYTES(0, &a, 0x48, 0x01, 0xc8), DROP_NOT_MEMORY);       /* add %rcx,%rax */
    /* Fences: lock add/or of zero (HotSpot's volatile and GC barriers). */
    CHECK_EQ_U(BYTES(0, &a, 0xf0, 0x83, 0x44, 0x24, 0xc0, 0x00), DROP_NOT_MEMORY); /* lock addl $0,-0x40(%rsp) */
    CHECK_EQ_U(BYTES(0, &a, 0xf0, 0x83, 0x0c, 0x24, 0x00), DROP_NOT_MEMORY);       /* lock orl $0,(%rsp) */
    CHECK_EQ_U(BYTES(0, &a, 0xf0, 0x83, 0x04, 0x24, 0x01), DROP_NONE);             /* lock addl $1,(%rsp): data */
    CHECK_EQ_U(BYTES(0, &a, 0x83, 0x04, 0x24, 0x00), DROP_NONE);                   /* addl $0 without lock */
}

TEST(unknown_and_bad)
{
    mem_access a;
    regs_clear();
    /* vpgatherdd %xmm1,(%rax,%xmm2,4),%xmm0: VSIB index is a vector register. */
    CHECK_EQ_U(BYTES(0, &a, 0xc4, 0xe2, 0x71, 0x90, 0x04, 0x90), DROP_ADDR_UNKNOWN);
    CHECK_EQ_U(BYTES(0, &a, 0x06), DROP_DECODE_FAILED);      /* push %es: invalid in 64-bit */
    CHECK_EQ_U(BYTES(0, &a, 0x48, 0x89), DROP_DECODE_FAILED); /* truncated */
}

TEST(access_at_live)
{
    static const uint8_t code[] = {
        0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0, /* 0: mov %fs:0x28,%rax */
        0x48, 0x8b, 0x05, 0x20, 0, 0, 0,            /* 9: mov 0x20(%rip),%rax */
        0x65, 0x48, 0x8b, 0x04, 0x25, 0x10, 0, 0, 0, /* 16: mov %gs:0x10,%rax */
        0x48, 0x8b, 0x00,                           /* 25: mov (%rax),%rax */
    };
    uint8_t *p = map_code(code, sizeof code);
    CHECK(p != NULL);
    if (!p)
        return;
    regs_clear();
    regs[REG_RAX] = 0x1234;
    ucontext_t uc = uc_from_regs();
    mem_access a;
    CHECK_EQ_U(decode_access_at((uint64_t)p, &uc, &a), DROP_NONE);
    check_access(&a, fs_base_now() + 0x28, 8, ACCESS_LOAD, ACCESS_INT);
    CHECK_EQ_U(a.pc, (uint64_t)p);
    CHECK_EQ_U(decode_access_at((uint64_t)p + 9, &uc, &a), DROP_NONE);
    CHECK_EQ_U(a.addr, (uint64_t)p + 16 + 0x20);

    unsigned long gs = 0;
    syscall(SYS_arch_prctl, ARCH_GET_GS, &gs);
    errno = 1234;
    CHECK_EQ_U(decode_access_at((uint64_t)p + 16, &uc, &a), DROP_NONE);
    CHECK_EQ_U(errno, 1234);
    CHECK_EQ_U(a.addr, gs + 0x10);
    /* Pre-state: the instruction overwriting its base does not matter yet. */
    CHECK_EQ_U(decode_access_at((uint64_t)p + 25, &uc, &a), DROP_NONE);
    CHECK_EQ_U(a.addr, 0x1234);
}

TEST(access_at_page_edges)
{
    uint8_t *p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    if (p == MAP_FAILED)
        return;
    memset(p, 0xcc, 2 * PAGE);
    /* mov 0x10(%rip),%rax straddling the page boundary: needs the retry. */
    static const uint8_t rel[] = { 0x48, 0x8b, 0x05, 0x10, 0, 0, 0 };
    memcpy(p + PAGE - 3, rel, sizeof rel);
    /* mov %rax,(%rdx) ending exactly at the end of the first page. */
    static const uint8_t st[] = { 0x48, 0x89, 0x02 };
    memcpy(p + PAGE - 6, st, sizeof st);
    mprotect(p, 2 * PAGE, PROT_READ | PROT_EXEC);
    regs_clear();
    regs[REG_RDX] = 0x4242;
    ucontext_t uc = uc_from_regs();
    mem_access a;
    CHECK_EQ_U(decode_access_at((uint64_t)p + PAGE - 3, &uc, &a), DROP_NONE);
    CHECK_EQ_U(a.addr, (uint64_t)p + PAGE - 3 + 7 + 0x10);
    CHECK_EQ_U(a.insn_len, 7);

    /* Now make the second page unreadable and put the store flush at the
     * edge: decoding must succeed without the next page. (Zydis happens to
     * read lazily, so this guards the result rather than proving the bound.) */
    mprotect(p, 2 * PAGE, PROT_READ | PROT_WRITE);
    memcpy(p + PAGE - 3, st, sizeof st);
    mprotect(p, PAGE, PROT_READ | PROT_EXEC);
    mprotect(p + PAGE, PAGE, PROT_NONE);
    CHECK_EQ_U(decode_access_at((uint64_t)p + PAGE - 3, &uc, &a), DROP_NONE);
    check_access(&a, 0x4242, 8, ACCESS_STORE, ACCESS_INT);
}

/*
 *  0: 48 89 02       mov %rax,(%rdx)
 *  3: 48 83 c1 01    add $1,%rcx        <- jmp target
 *  7: 8b 1e          mov (%rsi),%ebx
 *  9: 48 89 4a 08    mov %rcx,0x8(%rdx)
 * 13: eb f4          jmp 3
 * 15: c3             ret
 */
static const uint8_t loop_fn[] = {
    0x48, 0x89, 0x02, 0x48, 0x83, 0xc1, 0x01, 0x8b, 0x1e,
    0x48, 0x89, 0x4a, 0x08, 0xeb, 0xf4, 0xc3,
};

static void check_loop_fn(uint64_t f, const ucontext_t *uc)
{
    uint64_t end = f + sizeof loop_fn;
    mem_access a;
    /* The jmp's target: the store before it, flagged as maybe not run. */
    CHECK_EQ_U(decode_access_before(f + 3, f, end, 0, uc, &a), DROP_NONE);
    check_access(&a, 0x1000, 8, ACCESS_STORE, ACCESS_INT);
    CHECK_EQ_U(a.at_target, 1);
    CHECK_EQ_U(decode_access_before(f + 7, f, end, 0, uc, &a), DROP_NOT_MEMORY);
    CHECK_EQ_U(decode_access_before(f + 9, f, end, 0, uc, &a), DROP_NONE);
    check_access(&a, 0x9000, 4, ACCESS_LOAD, ACCESS_INT);
    CHECK_EQ_U(a.at_target, 0);
    CHECK_EQ_U(a.pc, f + 7);
    CHECK_EQ_U(a.insn_len, 2);
    CHECK_EQ_U(decode_access_before(f + 13, f, end, 0, uc, &a), DROP_NONE);
    check_access(&a, 0x1008, 8, ACCESS_STORE, ACCESS_INT);
    CHECK_EQ_U(a.pc, f + 9);
    CHECK_EQ_U(decode_access_before(f + 15, f, end, 0, uc, &a), DROP_NOT_MEMORY);
    CHECK_EQ_U(decode_access_before(f + 16, f, end, 0, uc, &a), DROP_NOT_MEMORY); /* after ret */
    CHECK_EQ_U(decode_access_before(f + 1, f, end, 0, uc, &a), DROP_NO_BOUNDARY);
    CHECK_EQ_U(decode_access_before(f + 5, f, end, 0, uc, &a), DROP_NO_BOUNDARY);
    CHECK_EQ_U(decode_access_before(f + 8, f, end, 0, uc, &a), DROP_NO_BOUNDARY);
    CHECK_EQ_U(decode_access_before(f, f, end, 0, uc, &a), DROP_NO_BOUNDARY);
    CHECK_EQ_U(decode_access_before(f + 20, f, end, 0, uc, &a), DROP_NO_BOUNDARY);
}

TEST(before_loop_function)
{
    uint8_t *p = map_code(loop_fn, sizeof loop_fn);
    CHECK(p != NULL);
    if (!p)
        return;
    regs_clear();
    regs[REG_RDX] = 0x1000;
    regs[REG_RSI] = 0x9000;
    ucontext_t uc = uc_from_regs();
    check_loop_fn((uint64_t)p, &uc); /* sweeps */
    check_loop_fn((uint64_t)p, &uc); /* cache hits: same answers */
}

TEST(before_uses_cache)
{
    uint8_t *p = map_code(loop_fn, sizeof loop_fn);
    CHECK(p != NULL);
    if (!p)
        return;
    uint64_t f = (uint64_t)p, end = f + sizeof loop_fn;
    regs_clear();
    regs[REG_RSI] = 0x9000;
    ucontext_t uc = uc_from_regs();
    mem_access a;
    CHECK_EQ_U(decode_access_before(f + 9, f, end, 0, &uc, &a), DROP_NONE);
    /* Retarget the jmp at f+9. A fresh sweep would now say branch target;
     * the cached answer must not change, proving no sweep happened. */
    mprotect(p, PAGE, PROT_READ | PROT_WRITE);
    p[14] = 0xfa; /* 15 - 6 = 9 */
    mprotect(p, PAGE, PROT_READ | PROT_EXEC);
    CHECK_EQ_U(decode_access_before(f + 9, f, end, 0, &uc, &a), DROP_NONE);
    CHECK_EQ_U(a.addr, 0x9000);
    CHECK_EQ_U(a.at_target, 0);
    /* Same bytes in a fresh mapping are swept and do see the new target. */
    uint8_t *q = map_code(p, sizeof loop_fn);
    CHECK(q != NULL);
    if (q) {
        CHECK_EQ_U(decode_access_before((uint64_t)q + 9, (uint64_t)q, (uint64_t)q + sizeof loop_fn, 0,
                                        &uc, &a), DROP_NONE);
        CHECK_EQ_U(a.at_target, 1);
    }
}

TEST(before_forward_branch)
{
    static const uint8_t code[] = {
        0x48, 0x85, 0xc0, /* 0: test %rax,%rax */
        0x74, 0x03,       /* 3: je 8 */
        0x48, 0x89, 0x02, /* 5: mov %rax,(%rdx) */
        0x8b, 0x06,       /* 8: mov (%rsi),%eax */
        0xe8, 0xf9, 0xff, 0xff, 0xff, /* 10: call 8 */
        0x48, 0x89, 0x02, /* 15: mov %rax,(%rdx) */
        0xc3,             /* 18: ret */
    };
    uint8_t *p = map_code(code, sizeof code);
    CHECK(p != NULL);
    if (!p)
        return;
    uint64_t f = (uint64_t)p, end = f + sizeof code;
    regs_clear();
    regs[REG_RDX] = 0x1000;
    regs[REG_RSI] = 0x2000;
    ucontext_t uc = uc_from_regs();
    mem_access a;
    /* The store before 8 may have been skipped by the je (and the call). */
    CHECK_EQ_U(decode_access_before(f + 8, f, end, 0, &uc, &a), DROP_NONE);
    check_access(&a, 0x1000, 8, ACCESS_STORE, ACCESS_INT);
    CHECK_EQ_U(a.at_target, 1);
    CHECK_EQ_U(decode_access_before(f + 10, f, end, 0, &uc, &a), DROP_NONE);
    check_access(&a, 0x2000, 4, ACCESS_LOAD, ACCESS_INT);
    CHECK_EQ_U(decode_access_before(f + 18, f, end, 0, &uc, &a), DROP_NONE);
    check_access(&a, 0x1000, 8, ACCESS_STORE, ACCESS_INT);
}

/* The code locate_access_before's fake front end bounds. */
static code_bounds located;

static int located_bounds(const ucontext_t *uc, code_bounds *out)
{
    (void)uc;
    *out = located;
    return 0;
}

static const engine_frontend located_frontend = { .name = "test", .bounds = located_bounds };

/* code mapped as the one function the fake front end knows, registers cleared */
static uint8_t *map_located(const uint8_t *code, size_t len)
{
    uint8_t *p = map_code(code, len);
    if (p)
        located = (code_bounds){ .start = (uint64_t)p, .end = (uint64_t)p + len };
    regs_clear();
    return p;
}

TEST(locate_takes_the_access_before_a_target_only_if_it_touched_the_watch)
{
    static const uint8_t code[] = {
        0x74, 0x03,       /* 0: je 5 */
        0x48, 0x89, 0x02, /* 2: mov %rax,(%rdx) */
        0xeb, 0x00,       /* 5: jmp 7 */
        0xc3,             /* 7: ret */
    };
    const engine_frontend *fe = &located_frontend;
    uint8_t *p = map_located(code, sizeof code);
    CHECK(p != NULL);
    if (!p)
        return;
    regs[REG_RDX] = 0x1000;
    mem_access a;
    /* A trap at 5, a target: a jump there touches no data, so a watch on
     * the store's bytes fired on the store. */
    regs[REG_RIP] = (greg_t)(p + 5);
    ucontext_t uc = uc_from_regs();
    CHECK_EQ_U(locate_access_before(fe, &uc, 0x1004, 0x1008, &a), DROP_NONE);
    check_access(&a, 0x1000, 8, ACCESS_STORE, ACCESS_INT);
    CHECK_EQ_U(a.pc, (uint64_t)p + 2);
    /* A watch on other bytes: not the store's trap (the cached answer says so too). */
    CHECK_EQ_U(locate_access_before(fe, &uc, 0x2000, 0x2008, &a), DROP_BRANCH_TARGET);
    /* A trap at 7, after a jump: nothing before it touched memory. */
    regs[REG_RIP] = (greg_t)(p + 7);
    uc = uc_from_regs();
    CHECK_EQ_U(locate_access_before(fe, &uc, 0x1000, 0x1008, &a), DROP_BRANCH_TARGET);
}

TEST(locate_takes_a_load_that_wrote_its_own_base_at_the_watched_bytes)
{
    static const uint8_t code[] = {
        0x48, 0x8b, 0x00, /* 0: mov (%rax),%rax */
        0xc3,             /* 3: ret */
    };
    const engine_frontend *fe = &located_frontend;
    uint8_t *p = map_located(code, sizeof code);
    CHECK(p != NULL);
    if (!p)
        return;
    regs[REG_RAX] = 0x5555;   /* what it loaded: its address is gone */
    regs[REG_RIP] = (greg_t)(p + 3);
    ucontext_t uc = uc_from_regs();
    mem_access a;
    CHECK_EQ_U(decode_access_before((uint64_t)p + 3, (uint64_t)p, (uint64_t)p + sizeof code, 0, &uc, &a),
               DROP_ADDR_CLOBBERED);
    /* The trap on [0x2000, 0x2008) fired on it: it loaded those bytes. */
    CHECK_EQ_U(locate_access_before(fe, &uc, 0x2000, 0x2008, &a), DROP_NONE);
    check_access(&a, 0x2000, 8, ACCESS_LOAD, ACCESS_INT);
    CHECK_EQ_U(a.pc, (uint64_t)p);
}

TEST(before_decode_failure)
{
    /* 0: mov %rax,(%rdx); 3: invalid byte; then ret. */
    static const uint8_t code[] = { 0x48, 0x89, 0x02, 0x06, 0xc3 };
    uint8_t *p = map_code(code, sizeof code);
    CHECK(p != NULL);
    if (!p)
        return;
    uint64_t f = (uint64_t)p, end = f + sizeof code;
    regs_clear();
    regs[REG_RDX] = 0x1000;
    ucontext_t uc = uc_from_regs();
    mem_access a;
    /* Garbage after rip does not matter: the boundary is already found. */
    CHECK_EQ_U(decode_access_before(f + 3, f, end, 0, &uc, &a), DROP_NONE);
    check_access(&a, 0x1000, 8, ACCESS_STORE, ACCESS_INT);
    CHECK_EQ_U(decode_access_before(f + 5, f, end, 0, &uc, &a), DROP_DECODE_FAILED);
    CHECK_EQ_U(decode_access_before(f + 5, f, end, 0, &uc, &a), DROP_DECODE_FAILED); /* cached */
}

TEST(before_sweep_limit)
{
    size_t n = 80 * 1024;
    uint8_t *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    if (p == MAP_FAILED)
        return;
    memset(p, 0x90, n); /* nop */
    p[n - 1] = 0xc3;
    mprotect(p, n, PROT_READ | PROT_EXEC);
    ucontext_t uc = uc_from_regs();
    mem_access a;
    uint64_t f = (uint64_t)p;
    CHECK_EQ_U(decode_access_before(f + 100, f, f + n, 0, &uc, &a), DROP_NOT_MEMORY);
    CHECK_EQ_U(decode_access_before(f + 70 * 1024, f, f + n, 0, &uc, &a), DROP_NO_BOUNDARY);
}

/* A loop with two stores: the head (offset 0) is a branch target, so the
 * basic block every sample in the body draws from starts there. */
static const uint8_t sampled_loop[] = {
    0x48, 0x83, 0xc1, 0x01, /* 0:  add $1,%rcx          loop head */
    0x48, 0x89, 0x02,       /* 4:  mov %rax,(%rdx)      store A */
    0x48, 0x89, 0x5a, 0x08, /* 7:  mov %rbx,0x8(%rdx)   store B */
    0x8b, 0x1e,             /* 11: mov (%rsi),%ebx      load via rsi */
    0x48, 0x83, 0xc2, 0x10, /* 13: add $16,%rdx         moves both stores' base */
    0x48, 0xff, 0xcf,       /* 17: dec %rdi */
    0x75, 0xea,             /* 20: jne 0 */
    0xc3,                   /* 22: ret */
};

/* code mapped executable, as a function address; 0 after a failed CHECK. */
static uint64_t map_checked(const uint8_t *code, size_t n)
{
    uint8_t *p = map_code(code, n);
    CHECK(p != NULL);
    return (uint64_t)(uintptr_t)p;
}

static enum drop_reason sampled_at(uint64_t f, size_t n, unsigned off, uint8_t want, uint64_t draw,
                                   mem_access *a)
{
    ucontext_t uc = uc_from_regs();
    return decode_access_sampled(f + off, f, f + n, 0, want, draw, &uc, a);
}

/* Which store draw d gives to a sample at off, and how it is taken. */
static void check_drawn(uint64_t f, unsigned off, uint64_t draw, unsigned store_off, uint64_t addr,
                        int ahead, int deferred)
{
    mem_access a;
    CHECK_EQ_U(sampled_at(f, sizeof sampled_loop, off, ACCESS_STORE, draw, &a), DROP_NONE);
    CHECK_EQ_U(a.pc, f + store_off);
    CHECK_EQ_U(a.addr, addr);
    CHECK_EQ_U(a.ahead, ahead);
    CHECK_EQ_U(a.deferred, deferred);
    CHECK_EQ_U(a.kind, ACCESS_STORE);
    CHECK_EQ_U(a.size, 8);
}

TEST(sampled_draws_each_access_of_the_region)
{
    uint64_t f = map_checked(sampled_loop, sizeof sampled_loop);
    if (!f)
        return;
    regs_clear();
    regs[REG_RDX] = 0x1000;
    regs[REG_RSI] = 0x2000;
    /* At the loop head (where QEMU's timer always lands): both ahead,
     * whichever the draw names, not always the nearest. */
    check_drawn(f, 0, 0, 4, 0x1000, 1, 0);
    check_drawn(f, 0, 1, 7, 0x1008, 1, 0);
    check_drawn(f, 0, 7, 7, 0x1008, 1, 0);   /* draw mod 2 */
    /* Between them: A ran, B is next. */
    check_drawn(f, 7, 0, 4, 0x1000, 0, 0);
    check_drawn(f, 7, 1, 7, 0x1008, 1, 0);
    /* Both ran, base unchanged since: from the registers. */
    check_drawn(f, 13, 0, 4, 0x1000, 0, 0);
    check_drawn(f, 13, 1, 7, 0x1008, 0, 0);
    /* After "add $16,%rdx" neither address is in the registers: deferred
     * to a code breakpoint, which takes it on the next pass. */
    check_drawn(f, 17, 0, 4, 0, 0, 1);
    check_drawn(f, 20, 1, 7, 0, 0, 1);
    /* The load: from rsi, which nothing changes. */
    mem_access a;
    CHECK_EQ_U(sampled_at(f, sizeof sampled_loop, 20, ACCESS_LOAD, 5, &a), DROP_NONE);
    CHECK_EQ_U(a.pc, f + 11);
    check_access(&a, 0x2000, 4, ACCESS_LOAD, ACCESS_INT);
    /* Cached answers agree, and still follow the draw. */
    ucontext_t uc = uc_from_regs();
    enum drop_reason r;
    CHECK(decode_access_sampled_cached(f + 13, ACCESS_STORE, 1, &uc, &a, &r) == 1);
    CHECK_EQ_U(r, DROP_NONE);
    CHECK_EQ_U(a.pc, f + 7);
    CHECK(decode_access_sampled_cached(f + 13, ACCESS_STORE, 2, &uc, &a, &r) == 1);
    CHECK_EQ_U(a.pc, f + 4);
    CHECK(decode_access_sampled_cached(f + 17, ACCESS_STORE, 0, &uc, &a, &r) == 1);
    CHECK(r == DROP_NONE && a.deferred && a.pc == f + 4);
    CHECK(decode_access_sampled_cached(f + 15, ACCESS_STORE, 0, &uc, &a, &r) == 0);
    /* Each says how dense in accesses of its kind its region is (the
     * engine weighs its pair by that): 2 stores, 1 load of 7 instructions
     * (add .. jne: the back edge ends it); the instruction at a pc, taken
     * with no region, has none. */
    CHECK(decode_access_sampled_cached(f + 17, ACCESS_STORE, 0, &uc, &a, &r) == 1);
    CHECK(a.region_insns == 7 && a.region_cands == 2);
    CHECK_EQ_U(sampled_at(f, sizeof sampled_loop, 20, ACCESS_LOAD, 5, &a), DROP_NONE);
    CHECK(a.region_insns == 7 && a.region_cands == 1);
    uc.uc_mcontext.gregs[REG_RIP] = (greg_t)(f + 4);
    CHECK_EQ_U(decode_access_at(f + 4, &uc, &a), DROP_NONE);
    CHECK_EQ_U(a.region_insns, 0);
}

/* A sample at a rep stos with elements left takes the rep, whatever the
 * draw, as a region of its own: it landed in the rep's elements' time. */
TEST(sampled_in_a_running_rep_takes_the_rep)
{
    static const uint8_t code[] = {
        0x48, 0x89, 0x02,       /* 0: mov %rax,(%rdx) */
        0xf3, 0xaa,             /* 3: rep stosb */
        0xc3,                   /* 5: ret */
    };
    uint64_t f = map_checked(code, sizeof code);
    if (!f)
        return;
    mem_access a;
    regs_clear();
    regs[REG_RDX] = 0x3000;
    regs[REG_RDI] = 0x4000;
    regs[REG_RCX] = 100;
    for (uint64_t d = 0; d < 4; d++) {
        CHECK_EQ_U(sampled_at(f, sizeof code, 3, ACCESS_STORE, d, &a), DROP_NONE);
        CHECK(a.pc == f + 3 && a.string && a.addr == 0x4000);
        CHECK(a.region_insns == 1 && a.region_cands == 1);
    }
    /* Done (rcx 0): the pc is past its elements; the region draws as usual. */
    regs[REG_RCX] = 0;
    CHECK_EQ_U(sampled_at(f, sizeof code, 3, ACCESS_STORE, 0, &a), DROP_NONE);
    CHECK(a.pc == f && a.region_insns == 3 && a.region_cands == 2);
}

/* Every draw over many samples: each store of the block equally often. */
TEST(sampled_draws_are_uniform)
{
    uint64_t f = map_checked(sampled_loop, sizeof sampled_loop);
    if (!f)
        return;
    unsigned at_b = 0, n = 1000;
    watch_set w;
    watch_init(&w, 4, 12345);
    for (unsigned i = 0; i < n; i++) {
        mem_access a;
        CHECK_EQ_U(sampled_at(f, sizeof sampled_loop, 0, ACCESS_STORE, watch_random(&w), &a),
                   DROP_NONE);
        at_b += a.pc == f + 7;
    }
    /* Binomial(1000, 0.5): 450..550 is more than 3 standard deviations. */
    CHECK(at_b >= 450 && at_b <= 550);
}

/* A forward branch over straight code to its target is an if's arm: a
 * pass runs it whole or not at all, so it is a region of its own, and the
 * region around it leaves it out (decode_arm.c). */
TEST(sampled_regions_leave_an_if_arm_out_and_make_it_one_of_its_own)
{
    static const uint8_t code[] = {
        0x48, 0x89, 0x02,             /* 0: mov %rax,(%rdx) */
        0xe8, 0x00, 0x00, 0x00, 0x00, /* 3: call 8 */
        0x48, 0x83, 0xc1, 0x01,       /* 8: add $1,%rcx */
        0x75, 0x03,                   /* 12: jne 17          over the arm */
        0x48, 0x89, 0x01,             /* 14: mov %rax,(%rcx) the arm */
        0xc3,                         /* 17: ret */
    };
    uint64_t f = map_checked(code, sizeof code);
    if (!f)
        return;
    mem_access a;
    regs_clear();
    regs[REG_RDX] = 0x3000;
    regs[REG_RCX] = 0x5000;
    CHECK_EQ_U(sampled_at(f, sizeof code, 3, ACCESS_STORE, 1, &a), DROP_NONE);
    CHECK(a.pc == f && a.addr == 0x3000 && !a.guarded);   /* behind the pc: it ran */
    /* After the call a region begins: add, jne, ret, and no store of its own. */
    for (unsigned off = 8; off <= 17; off += off == 8 ? 4 : 5)
        CHECK_EQ_U(sampled_at(f, sizeof code, off, ACCESS_STORE, 0, &a), DROP_NOT_MEMORY);
    /* In the arm, the arm: its store runs next, unguarded. */
    CHECK_EQ_U(sampled_at(f, sizeof code, 14, ACCESS_STORE, 0, &a), DROP_NONE);
    CHECK(a.ahead && a.pc == f + 14 && a.addr == 0x5000 && !a.guarded);
    CHECK_EQ_U(a.region_insns, 1);
    CHECK_EQ_U(a.region_cands, 1);
}

/* A never-taken check jumps out of line (past the ret): what follows it
 * still runs on most passes and stays in the region, guarded. */
TEST(sampled_regions_run_past_out_of_line_checks_and_guard_what_follows)
{
    static const uint8_t code[] = {
        0x48, 0x83, 0xc1, 0x01,       /* 0: add $1,%rcx */
        0x75, 0x04,                   /* 4: jne 10           out of line */
        0x48, 0x89, 0x01,             /* 6: mov %rax,(%rcx) */
        0xc3,                         /* 9: ret */
        0xc3,                         /* 10: ret */
    };
    uint64_t f = map_checked(code, sizeof code);
    if (!f)
        return;
    mem_access a;
    regs_clear();
    regs[REG_RCX] = 0x5000;
    CHECK_EQ_U(sampled_at(f, sizeof code, 0, ACCESS_STORE, 0, &a), DROP_NONE);
    CHECK(a.deferred && a.pc == f + 6 && a.guarded);   /* the add changes its base; the jne may skip it */
    CHECK_EQ_U(sampled_at(f, sizeof code, 4, ACCESS_STORE, 0, &a), DROP_NONE);
    CHECK(a.ahead && a.pc == f + 6 && a.addr == 0x5000 && a.guarded);
    CHECK_EQ_U(sampled_at(f, sizeof code, 6, ACCESS_STORE, 0, &a), DROP_NONE);
    CHECK(a.ahead && a.pc == f + 6 && !a.guarded);    /* past the jne: it runs next */
    CHECK_EQ_U(a.region_insns, 4);
}

/* A loop with an if in its body, and a store before the loop. The if's arm
 * is left out of the loop's region (a pass that skips it runs 6 of the
 * region's instructions, not 7), and it is a region of its own; the store
 * at the head, behind an arm that may have written its registers, is
 * taken at its next run. The loop head, a back edge's target, cuts: the
 * store before the loop runs once per loop, and forms a region of its own. */
TEST(sampled_regions_leave_if_arms_out_of_a_loop_body)
{
    static const uint8_t code[] = {
        0x48, 0x89, 0x0e,       /* 0:  mov %rcx,(%rsi)     before the loop */
        0x48, 0x89, 0x02,       /* 3:  mov %rax,(%rdx)     loop head */
        0xa8, 0x01,             /* 6:  test $1,%al */
        0x74, 0x03,             /* 8:  je 13 */
        0x48, 0xff, 0xc0,       /* 10: inc %rax            the arm */
        0x48, 0x89, 0x07,       /* 13: mov %rax,(%rdi)     the je's target */
        0x48, 0xff, 0xc9,       /* 16: dec %rcx */
        0x75, 0xee,             /* 19: jne 3 */
        0xc3,                   /* 21: ret */
    };
    uint64_t f = map_checked(code, sizeof code);
    if (!f)
        return;
    mem_access a;
    regs_clear();
    regs[REG_RDX] = 0x3000;
    regs[REG_RDI] = 0x4000;
    regs[REG_RSI] = 0x5000;
    for (unsigned off = 13; off <= 19; off += 3) {
        CHECK_EQ_U(sampled_at(f, sizeof code, off, ACCESS_STORE, 0, &a), DROP_NONE);
        CHECK(a.deferred && a.pc == f + 3 && !a.guarded && !a.past_target);
        CHECK_EQ_U(a.region_cands, 2);
        CHECK_EQ_U(a.region_insns, 6);
    }
    CHECK_EQ_U(sampled_at(f, sizeof code, 19, ACCESS_STORE, 1, &a), DROP_NONE);
    CHECK(!a.deferred && a.pc == f + 13 && a.addr == 0x4000 && !a.guarded);
    /* Before the arm: the head's store ran on this pass, from the registers. */
    CHECK_EQ_U(sampled_at(f, sizeof code, 8, ACCESS_STORE, 0, &a), DROP_NONE);
    CHECK(!a.deferred && a.pc == f + 3 && a.addr == 0x3000 && !a.past_target);
    /* In the arm: no store of its own. */
    CHECK_EQ_U(sampled_at(f, sizeof code, 10, ACCESS_STORE, 0, &a), DROP_NOT_MEMORY);
    /* Before the loop: its own store only, not the loop's. */
    for (uint64_t d = 0; d < 2; d++) {
        CHECK_EQ_U(sampled_at(f, sizeof code, 0, ACCESS_STORE, d, &a), DROP_NONE);
        CHECK(a.ahead && a.pc == f && a.addr == 0x5000);
        CHECK_EQ_U(a.region_cands, 1);
    }
    /* The cached answers say the same. */
    ucontext_t uc = uc_from_regs();
    enum drop_reason r;
    CHECK(decode_access_sampled_cached(f + 16, ACCESS_STORE, 0, &uc, &a, &r) == 1 && r == DROP_NONE);
    CHECK(a.deferred && a.pc == f + 3 && a.region_insns == 6);
    CHECK(decode_access_sampled_cached(f + 8, ACCESS_STORE, 0, &uc, &a, &r) == 1 && r == DROP_NONE);
    CHECK(!a.deferred && a.pc == f + 3);
    CHECK(decode_access_sampled_cached(f + 10, ACCESS_STORE, 0, &uc, &a, &r) == 1 && r == DROP_NOT_MEMORY);
}

/* Every draw of a sample at off takes the store at store_off, from a
 * region of insns instructions (0: not checked). */
static void check_region_draws(uint64_t f, size_t n, unsigned off, unsigned store_off, unsigned insns)
{
    mem_access a;
    for (uint64_t d = 0; d < 4; d++) {
        CHECK_EQ_U(sampled_at(f, n, off, ACCESS_STORE, d, &a), DROP_NONE);
        CHECK_EQ_U(a.pc, f + store_off);
        if (insns)
            CHECK_EQ_U(a.region_insns, insns);
    }
}

/* code mapped, with the stores' bases (rdx, rsi) in the registers. */
static uint64_t map_for_draws(const uint8_t *code, size_t n)
{
    regs_clear();
    regs[REG_RDX] = 0x3000;
    regs[REG_RSI] = 0x6000;
    return map_checked(code, n);
}

/* A loop's back edge ends its region: the code after the loop draws only
 * from its own accesses. */
TEST(sampled_regions_end_at_back_edges)
{
    static const uint8_t code[] = {
        0x48, 0x89, 0x02,       /* 0: mov %rax,(%rdx)   loop head */
        0x48, 0xff, 0xc9,       /* 3: dec %rcx */
        0x75, 0xf8,             /* 6: jne 0 */
        0x48, 0x89, 0x06,       /* 8: mov %rax,(%rsi) */
        0xc3,                   /* 11: ret */
    };
    uint64_t f = map_for_draws(code, sizeof code);
    if (!f)
        return;
    check_region_draws(f, sizeof code, 6, 0, 0);
    check_region_draws(f, sizeof code, 11, 8, 0);
}

/* A loop whose back edge is out of line (brotli's FindMatchLengthWithLimit,
 * inlined: its 8-byte compare loop jumps out past the function's return and
 * comes back from there). The region before the loop ends at its head, as
 * a sample at the head starts one there: a sample before the head that drew
 * from the loop too weighed the store before it by its region's 2
 * instructions as if it had 6, and the store after the head got the loop's
 * samples and the code before its own. */
TEST(sampled_regions_end_at_heads_of_loops_closed_out_of_line)
{
    static const uint8_t code[] = {
        0x48, 0x89, 0x02,       /* 0: mov %rax,(%rdx) */
        0x48, 0xff, 0xc1,       /* 3: inc %rcx */
        0x48, 0x85, 0xc9,       /* 6: test %rcx,%rcx    loop head */
        0x78, 0x04,             /* 9: js 15             out of line */
        0x48, 0x89, 0x06,       /* 11: mov %rax,(%rsi) */
        0xc3,                   /* 14: ret */
        0x48, 0xff, 0xc1,       /* 15: inc %rcx */
        0x75, 0xf2,             /* 18: jne 6            the back edge */
        0xc3,                   /* 20: ret */
    };
    uint64_t f = map_for_draws(code, sizeof code);
    if (!f)
        return;
    check_region_draws(f, sizeof code, 3, 0, 2);
    check_region_draws(f, sizeof code, 9, 11, 4);
}

/* C2 enters a loop past its first instruction: a target inside the loop
 * body does not cut the region a sample at the loop head draws from. */
TEST(sampled_regions_run_past_targets_after_their_start)
{
    static const uint8_t code[] = {
        0x45, 0x8b, 0xc3,       /* 0: mov %r11d,%r8d    loop head */
        0x4a, 0x89, 0x04, 0xc7, /* 3: mov %rax,(%rdi,%r8,8) */
        0x41, 0xff, 0xc3,       /* 7: inc %r11d */
        0x75, 0xf4,             /* 10: jne 0 */
        0xeb, 0xf5,             /* 12: jmp 3            (the entry, past the head) */
    };
    uint64_t f = map_checked(code, sizeof code);
    if (!f)
        return;
    mem_access a;
    regs_clear();
    regs[REG_RDI] = 0x8000;
    regs[REG_R8] = 2;
    CHECK_EQ_U(sampled_at(f, sizeof code, 0, ACCESS_STORE, 0, &a), DROP_NONE);
    CHECK(a.deferred && a.pc == f + 3);   /* its index is set by the mov */
    CHECK_EQ_U(sampled_at(f, sizeof code, 3, ACCESS_STORE, 0, &a), DROP_NONE);
    CHECK(a.ahead && a.pc == f + 3 && a.addr == 0x8010);
}

/* A region of 70 stores is drawn from in fixed parts: the first 64
 * instructions for every pc among them, the last 6 (and the ret) after. */
TEST(sampled_long_regions_are_cut_into_fixed_parts)
{
    static uint8_t code[70 * 3 + 1];
    for (unsigned i = 0; i < 70; i++)
        memcpy(&code[3 * i], (const uint8_t[]){ 0x48, 0x89, 0x02 }, 3);   /* mov %rax,(%rdx) */
    code[70 * 3] = 0xc3;
    uint64_t f = map_checked(code, sizeof code);
    if (!f)
        return;
    mem_access a;
    regs_clear();
    regs[REG_RDX] = 0x3000;
    const unsigned at[] = { 1, 40, 63, 64, 66, 70 }, cands[] = { 64, 64, 64, 6, 6, 6 };
    for (unsigned k = 0; k < 6; k++) {
        CHECK_EQ_U(sampled_at(f, sizeof code, 3 * at[k], ACCESS_STORE, 0, &a), DROP_NONE);
        CHECK_EQ_U(a.region_cands, cands[k]);
        CHECK_EQ_U(a.pc, f + (at[k] < 64 ? 0 : 3 * 64));
    }
}

/* A spill to the stack and a constant load beside the heap store: with
 * the skip flags they are not candidates. */
TEST(sampled_skips_stack_slots_and_constants)
{
    static const uint8_t code[] = {
        0x48, 0x89, 0x02,                         /* 0:  mov %rax,(%rdx)      heap */
        0x48, 0x89, 0x4c, 0x24, 0x10,             /* 3:  mov %rcx,0x10(%rsp)  spill */
        0x48, 0x8b, 0x1d, 0x10, 0x00, 0x00, 0x00, /* 8:  mov 0x10(%rip),%rbx  constant */
        0x48, 0x8b, 0x74, 0x24, 0x08,             /* 15: mov 0x8(%rsp),%rsi   reload */
        0x48, 0x83, 0xc1, 0x01,                   /* 20: add $1,%rcx */
        0xc3,                                     /* 24: ret */
    };
    uint64_t f = map_checked(code, sizeof code);
    if (!f)
        return;
    mem_access a;
    regs_clear();
    regs[REG_RDX] = 0x7000;
    regs[REG_RSP] = 0x9000;
    /* Without flags: two stores and two loads to draw from. */
    CHECK_EQ_U(sampled_at(f, sizeof code, 24, ACCESS_STORE, 1, &a), DROP_NONE);
    CHECK_EQ_U(a.pc, f + 3);
    CHECK(a.base_rsp && !a.rip_relative);
    CHECK_EQ_U(sampled_at(f, sizeof code, 24, ACCESS_LOAD, 1, &a), DROP_NONE);
    CHECK_EQ_U(a.pc, f + 15);
    /* Skipping rsp: only the heap store; only the constant load. */
    for (uint64_t d = 0; d < 3; d++) {
        CHECK_EQ_U(sampled_at(f, sizeof code, 24, ACCESS_STORE | ACCESS_SKIP_RSP, d, &a), DROP_NONE);
        CHECK_EQ_U(a.pc, f);
    }
    check_access(&a, 0x7000, 8, ACCESS_STORE, ACCESS_INT);
    CHECK(!a.base_rsp && !a.rip_relative);
    CHECK_EQ_U(sampled_at(f, sizeof code, 24, ACCESS_LOAD | ACCESS_SKIP_RSP, 1, &a), DROP_NONE);
    CHECK_EQ_U(a.pc, f + 8);
    CHECK(a.rip_relative);
    CHECK_EQ_U(a.addr, f + 15 + 0x10);
    /* Only an r15 base sets base_r15 (sampled_skips_the_thread_register). */
    CHECK(!a.base_r15);
    /* Skipping both: no load is left. */
    CHECK_EQ_U(sampled_at(f, sizeof code, 24, ACCESS_LOAD | ACCESS_SKIP_RSP | ACCESS_SKIP_RIP, 0, &a),
               DROP_NOT_MEMORY);
    /* Each combination is cached under its own key. */
    ucontext_t uc = uc_from_regs();
    enum drop_reason r;
    CHECK(decode_access_sampled_cached(f + 24, ACCESS_STORE, 1, &uc, &a, &r) == 1 && a.pc == f + 3);
    CHECK(decode_access_sampled_cached(f + 24, ACCESS_STORE | ACCESS_SKIP_RSP, 1, &uc, &a, &r) == 1 &&
          a.pc == f);
}

/* HotSpot's TLAB-top update through r15 (the thread) after a heap store. */
TEST(sampled_skips_the_thread_register)
{
    static const uint8_t code[] = {
        0x48, 0x89, 0x02,                         /* 0:  mov %rax,(%rdx) */
        0x4d, 0x89, 0x9f, 0x08, 0x01, 0x00, 0x00, /* 3:  mov %r11,0x108(%r15) */
        0x48, 0x83, 0xc1, 0x01,                   /* 10: add $1,%rcx */
        0xc3,                                     /* 14: ret */
    };
    uint64_t f = map_checked(code, sizeof code);
    if (!f)
        return;
    mem_access a;
    regs_clear();
    regs[REG_RDX] = 0x7000;
    regs[REG_R15] = 0xa000;
    CHECK_EQ_U(sampled_at(f, sizeof code, 14, ACCESS_STORE, 1, &a), DROP_NONE);
    CHECK_EQ_U(a.pc, f + 3);
    CHECK(a.base_r15);
    CHECK_EQ_U(a.addr, 0xa108);
    CHECK_EQ_U(sampled_at(f, sizeof code, 14, ACCESS_STORE | ACCESS_SKIP_R15, 1, &a), DROP_NONE);
    CHECK_EQ_U(a.pc, f);
    CHECK(!a.base_r15);
}

/* An access whose registers change between it and the pc is deferred, with
 * what can be known without them; one that overwrote its own base too. */
TEST(sampled_defers_what_the_registers_no_longer_give)
{
    static const uint8_t moved[] = {
        0x48, 0x83, 0xc1, 0x01, /* 0: add $1,%rcx */
        0x48, 0x83, 0xc2, 0x08, /* 4: add $8,%rdx       changes the store's base */
        0x89, 0x02,             /* 8: mov %eax,(%rdx) */
        0x48, 0x8b, 0x36,       /* 10: mov (%rsi),%rsi  overwrites its own base */
        0xc3,                   /* 13: ret */
    };
    uint64_t f = map_checked(moved, sizeof moved);
    if (!f)
        return;
    mem_access a;
    regs_clear();
    regs[REG_RDX] = 0x4000;
    regs[REG_RSI] = 0x6000;
    CHECK_EQ_U(sampled_at(f, sizeof moved, 4, ACCESS_STORE, 0, &a), DROP_NONE);
    CHECK(a.deferred && !a.ahead && a.pc == f + 8 && a.addr == 0);
    CHECK(a.size == 4 && a.kind == ACCESS_STORE);
    CHECK_EQ_U(sampled_at(f, sizeof moved, 8, ACCESS_STORE, 0, &a), DROP_NONE);
    CHECK(a.ahead && !a.deferred && a.pc == f + 8 && a.addr == 0x4000);
    CHECK_EQ_U(sampled_at(f, sizeof moved, 13, ACCESS_LOAD, 0, &a), DROP_NONE);
    CHECK(a.deferred && a.pc == f + 10 && a.size == 8 && a.kind == ACCESS_LOAD);
    CHECK_EQ_U(sampled_at(f, sizeof moved, 10, ACCESS_LOAD, 0, &a), DROP_NONE);
    CHECK(a.ahead && !a.deferred && a.addr == 0x6000);
}

/* A store behind the pc whose bytes an instruction since touched: its
 * pair has ended (a Java allocation's zeroing store and the constructor's
 * store two instructions later), so its next run is taken, not the
 * registers now. Other bytes leave it to the registers; an access whose
 * address the registers no longer give may have touched it. */
TEST(sampled_defers_an_access_whose_bytes_were_touched_since)
{
    static const uint8_t code[] = {
        0x48, 0x89, 0x02,       /* 0: mov %rax,(%rdx)      zeroing store */
        0x48, 0x89, 0x4a, 0x08, /* 3: mov %rcx,0x8(%rdx)   other bytes */
        0x48, 0x89, 0x1a,       /* 7: mov %rbx,(%rdx)      the same bytes */
        0x48, 0x8b, 0x36,       /* 10: mov (%rsi),%rsi     an address now lost */
        0xc3,                   /* 13: ret */
    };
    uint64_t f = map_checked(code, sizeof code);
    if (!f)
        return;
    mem_access a;
    regs_clear();
    regs[REG_RDX] = 0x4000;
    regs[REG_RSI] = 0x6000;
    /* At 7: only the 8 bytes after ran since the first store. */
    CHECK_EQ_U(sampled_at(f, sizeof code, 7, ACCESS_STORE, 0, &a), DROP_NONE);
    CHECK(!a.deferred && !a.touched && a.pc == f && a.addr == 0x4000);
    /* At 10: the third store overwrote it. */
    CHECK_EQ_U(sampled_at(f, sizeof code, 10, ACCESS_STORE, 0, &a), DROP_NONE);
    CHECK(a.deferred && a.touched && a.pc == f && a.addr == 0);
    CHECK_EQ_U(sampled_at(f, sizeof code, 10, ACCESS_STORE, 1, &a), DROP_NONE);
    CHECK(!a.deferred && !a.touched && a.pc == f + 3 && a.addr == 0x4008);
    /* At 13: the load's address went with its own result: it may have. */
    CHECK_EQ_U(sampled_at(f, sizeof code, 13, ACCESS_STORE, 2, &a), DROP_NONE);
    CHECK(a.deferred && a.touched && a.pc == f + 7);
}

/* Traps without a known boundary: the watched address picks the split. */
TEST(ending_at_uses_the_watched_address)
{
    static const uint8_t code[] = {
        0x90, 0x90, 0x90, 0x90,       /* 0: nops */
        0x48, 0x89, 0x42, 0x08,       /* 4: mov %rax,0x8(%rdx) */
        0xc3,                         /* 8: ret */
    };
    uint8_t *p = map_code(code, sizeof code);
    CHECK(p != NULL);
    if (!p)
        return;
    regs_clear();
    regs[REG_RDX] = 0x5000;
    ucontext_t uc = uc_from_regs();
    mem_access a;
    uint64_t rip = (uint64_t)p + 8;
    CHECK_EQ_U(decode_access_ending_at(rip, &uc, 0x5008, 0x5010, &a), DROP_NONE);
    CHECK_EQ_U(a.pc, (uint64_t)p + 4);
    check_access(&a, 0x5008, 8, ACCESS_STORE, ACCESS_INT);
    CHECK_EQ_U(decode_access_ending_at(rip, &uc, 0x6000, 0x6008, &a), DROP_NO_BOUNDARY);
    /* At the start of a mapping nothing before rip may be read. */
    CHECK_EQ_U(decode_access_ending_at((uint64_t)p, &uc, 0x5008, 0x5010, &a), DROP_NO_BOUNDARY);
}

/* A profile names its instructions after the run: code unmapped since (a
 * library dlclosed) must give no text, not a fault. */
TEST(format_of_unmapped_code_is_empty)
{
    static const uint8_t code[] = { 0x48, 0x89, 0x02 };   /* mov %rax,(%rdx) */
    uint8_t *p = map_code(code, sizeof code);
    CHECK(p != NULL);
    if (!p)
        return;
    char buf[64];
    CHECK(decode_format((uint64_t)(uintptr_t)p, 0, buf, sizeof buf) > 0);
    CHECK(munmap(p, PAGE) == 0);
    CHECK_EQ_U(decode_format((uint64_t)(uintptr_t)p, 0, buf, sizeof buf), 0);
    CHECK_EQ_U(buf[0], 0);
}

TEST(format_text)
{
    uint8_t *p = map_code(loop_fn, sizeof loop_fn);
    CHECK(p != NULL);
    if (!p)
        return;
    char buf[128];
    size_t n = decode_format((uint64_t)p, 0, buf, sizeof buf);
    CHECK_EQ_U(n, strlen(buf));
    CHECK(strstr(buf, "mov") != NULL);
    CHECK(strstr(buf, "%rax, (%rdx)") != NULL);
    n = decode_format((uint64_t)p, 1, buf, sizeof buf);
    CHECK(n > 0);
    CHECK(strstr(buf, "[rdx]") != NULL);
    CHECK(strstr(buf, "rax") != NULL);
    CHECK(strstr(buf, "%") == NULL);
    /* Branch targets are absolute, using pc as the runtime address. */
    char want[32];
    snprintf(want, sizeof want, "jmp 0x%llx", (unsigned long long)(uint64_t)p + 3);
    decode_format((uint64_t)p + 13, 0, buf, sizeof buf);
    CHECK_STR(buf, want);
    CHECK_EQ_U(decode_format((uint64_t)p, 0, buf, 4), 0); /* too small */
    CHECK_EQ_U(decode_format((uint64_t)p, 0, buf, 0), 0);
}

int main(void)
{
    if (decode_init() != 0) {
        printf("decode_init failed\n");
        return 1;
    }
    RUN(store_simple);
    RUN(string_instructions);
    RUN(load_sib);
    RUN(rip_relative);
    RUN(segments);
    RUN(addr32_wraps);
    RUN(float_types);
    RUN(read_modify_write);
    RUN(post_state_clobber);
    RUN(not_memory);
    RUN(unknown_and_bad);
    RUN(access_at_live);
    RUN(access_at_page_edges);
    RUN(before_loop_function);
    RUN(before_uses_cache);
    RUN(before_forward_branch);
    RUN(locate_takes_the_access_before_a_target_only_if_it_touched_the_watch);
    RUN(locate_takes_a_load_that_wrote_its_own_base_at_the_watched_bytes);
    RUN(before_decode_failure);
    RUN(sampled_draws_each_access_of_the_region);
    RUN(sampled_in_a_running_rep_takes_the_rep);
    RUN(sampled_draws_are_uniform);
    RUN(sampled_regions_leave_an_if_arm_out_and_make_it_one_of_its_own);
    RUN(sampled_regions_run_past_out_of_line_checks_and_guard_what_follows);
    RUN(sampled_regions_leave_if_arms_out_of_a_loop_body);
    RUN(sampled_long_regions_are_cut_into_fixed_parts);
    RUN(sampled_regions_end_at_back_edges);
    RUN(sampled_regions_end_at_heads_of_loops_closed_out_of_line);
    RUN(sampled_regions_run_past_targets_after_their_start);
    RUN(sampled_skips_stack_slots_and_constants);
    RUN(sampled_skips_the_thread_register);
    RUN(sampled_defers_what_the_registers_no_longer_give);
    RUN(sampled_defers_an_access_whose_bytes_were_touched_since);
    RUN(ending_at_uses_the_watched_address);
    RUN(before_sweep_limit);
    RUN(format_of_unmapped_code_is_empty);
    RUN(format_text);
    return HARNESS_EXIT();
}

/*
 * test_fpness.c - whether a sampled access's value is floating point
 * (fpness.c), through decode_access_sampled on real instruction bytes (as
 * gcc and gas emit them): integer vectors stored with movaps/movups are
 * integers, FP vectors are FP by their producer, scalar FP moves say so
 * themselves, each store of a mixed run gets its own producer, a value
 * whose producer is unknown is an integer; loads by their consumer.
 */
#include "decode.h"
#include "harness.h"

#include <sys/mman.h>

#define PAGE 4096u

/* One page of code, the rest int3, read+exec like real text (never
 * unmapped: the decode caches are keyed by address). */
static uint64_t map_code(const uint8_t *b, size_t n)
{
    uint8_t *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return 0;
    memset(p, 0xcc, PAGE);
    memcpy(p, b, n);
    mprotect(p, PAGE, PROT_READ | PROT_EXEC);
    return (uint64_t)p;
}

static ucontext_t uc;

/* The fp of the access at f+pc_off as a sample at f+off (function [f, f+n))
 * takes it: the first draw that picks it. -1 when none does. Asks twice,
 * so the cached answer is checked too. */
static int sampled_fp(uint64_t f, size_t n, unsigned off, uint8_t want, unsigned pc_off)
{
    for (uint64_t draw = 0; draw < 8; draw++) {
        mem_access a, b;
        enum drop_reason r;
        if (decode_access_sampled(f + off, f, f + n, 0, want, draw, &uc, &a) != DROP_NONE)
            return -1;
        if (a.pc != f + pc_off)
            continue;
        if (!decode_access_sampled_cached(f + off, want, draw, &uc, &b, &r) || r != DROP_NONE || b.fp != a.fp)
            return -2;
        return a.fp;
    }
    return -1;
}

#define EXPECT_FP(f, n, off, want, pc_off, fp) CHECK_EQ_U(sampled_fp(f, n, off, want, pc_off), fp)

/* gcc -O1, int_vector.c's inner loop: v4si a[j] = base[j] + d. */
static const uint8_t int_loop[] = {
    0x66, 0x0f, 0x6f, 0xc1,       /* 0:  movdqa %xmm1,%xmm0 (loop head) */
    0x66, 0x0f, 0xfe, 0x04, 0x06, /* 4:  paddd (%rsi,%rax,1),%xmm0 */
    0x0f, 0x29, 0x04, 0x07,       /* 9:  movaps %xmm0,(%rdi,%rax,1) */
    0x48, 0x83, 0xc0, 0x10,       /* 13: add $0x10,%rax */
    0x48, 0x39, 0xd0,             /* 17: cmp %rdx,%rax */
    0x75, 0xea,                   /* 20: jne 0 */
    0xc3,                         /* 22: ret */
};

/* The same loop storing v2df one[j] * d (fp_vector.c). */
static const uint8_t fp_loop[] = {
    0x66, 0x0f, 0x28, 0xc1,       /* 0:  movapd %xmm1,%xmm0 (loop head) */
    0x66, 0x0f, 0x59, 0x04, 0x06, /* 4:  mulpd (%rsi,%rax,1),%xmm0 */
    0x0f, 0x29, 0x04, 0x07,       /* 9:  movaps %xmm0,(%rdi,%rax,1) */
    0x48, 0x83, 0xc0, 0x10,       /* 13: add $0x10,%rax */
    0x48, 0x39, 0xd0,             /* 17: cmp %rdx,%rax */
    0x75, 0xea,                   /* 20: jne 0 */
    0xc3,                         /* 22: ret */
};

TEST(integer_vectors_through_movaps_are_integers)
{
    uint64_t f = map_code(int_loop, sizeof int_loop);
    CHECK(f != 0);
    if (!f)
        return;
    EXPECT_FP(f, sizeof int_loop, 13, ACCESS_STORE, 9, ACCESS_INT);  /* behind: after the store */
    EXPECT_FP(f, sizeof int_loop, 4, ACCESS_STORE, 9, ACCESS_INT);   /* ahead: paddd is between */
    /* Without context, movaps alone says nothing: integer. */
    mem_access a;
    CHECK_EQ_U(decode_access_at(f + 9, &uc, &a), DROP_NONE);
    CHECK_EQ_U(a.fp, ACCESS_INT);
}

TEST(integer_vectors_through_movups_are_integers)
{
    static const uint8_t code[] = {
        0x66, 0x0f, 0xd4, 0xc1, /* 0: paddq %xmm1,%xmm0 */
        0x0f, 0x11, 0x07,       /* 4: movups %xmm0,(%rdi) */
        0xc3,                   /* 7: ret */
    };
    uint64_t f = map_code(code, sizeof code);
    CHECK(f != 0);
    if (f)
        EXPECT_FP(f, sizeof code, 7, ACCESS_STORE, 4, ACCESS_INT);
}

TEST(fp_vectors_are_fp_by_their_producer)
{
    static const uint8_t floats[] = {
        0x0f, 0x58, 0xc1, /* 0: addps %xmm1,%xmm0 */
        0x0f, 0x11, 0x07, /* 3: movups %xmm0,(%rdi) */
        0xc3,             /* 6: ret */
    };
    uint64_t f = map_code(fp_loop, sizeof fp_loop), g = map_code(floats, sizeof floats);
    CHECK(f != 0 && g != 0);
    if (!f || !g)
        return;
    EXPECT_FP(f, sizeof fp_loop, 13, ACCESS_STORE, 9, ACCESS_F64);
    EXPECT_FP(f, sizeof fp_loop, 4, ACCESS_STORE, 9, ACCESS_F64);   /* ahead, mulpd between */
    EXPECT_FP(g, sizeof floats, 6, ACCESS_STORE, 3, ACCESS_F32);
}

TEST(scalar_fp_moves_say_so_themselves)
{
    static const uint8_t code[] = {
        0xf2, 0x48, 0x0f, 0x2a, 0xd0, /* 0: cvtsi2sd %rax,%xmm2 */
        0xf2, 0x0f, 0x11, 0x17,       /* 5: movsd %xmm2,(%rdi) */
        0xf3, 0x0f, 0x11, 0x0e,       /* 9: movss %xmm1,(%rsi) */
        0xc3,                         /* 13: ret */
    };
    uint64_t f = map_code(code, sizeof code);
    CHECK(f != 0);
    if (!f)
        return;
    EXPECT_FP(f, sizeof code, 9, ACCESS_STORE, 5, ACCESS_F64);
    EXPECT_FP(f, sizeof code, 13, ACCESS_STORE, 9, ACCESS_F32);   /* xmm1 made elsewhere: the move decides */
}

TEST(each_store_of_a_mixed_run_has_its_own_producer)
{
    static const uint8_t code[] = {
        0x66, 0x0f, 0xd4, 0xc1, /* 0:  paddq %xmm1,%xmm0 */
        0x66, 0x0f, 0x58, 0xd3, /* 4:  addpd %xmm3,%xmm2 */
        0x0f, 0x29, 0x07,       /* 8:  movaps %xmm0,(%rdi) */
        0x0f, 0x29, 0x57, 0x10, /* 11: movaps %xmm2,0x10(%rdi) */
        0xc3,                   /* 15: ret */
        0x66, 0x0f, 0x58, 0xc1, /* 16: addpd %xmm1,%xmm0 */
        0x0f, 0x28, 0xd0,       /* 20: movaps %xmm0,%xmm2 */
        0x0f, 0x29, 0x17,       /* 23: movaps %xmm2,(%rdi) */
        0xc3,                   /* 26: ret */
    };
    uint64_t f = map_code(code, sizeof code);
    CHECK(f != 0);
    if (!f)
        return;
    EXPECT_FP(f, 16, 11, ACCESS_STORE, 8, ACCESS_INT);
    EXPECT_FP(f, 16, 15, ACCESS_STORE, 11, ACCESS_F64);
    /* Through a register copy to the instruction that made the value. */
    EXPECT_FP(f + 16, sizeof code - 16, 10, ACCESS_STORE, 7, ACCESS_F64);
}

TEST(unknown_producers_make_integers)
{
    static const uint8_t code[] = {
        0x0f, 0x28, 0x06,             /* 0:  movaps (%rsi),%xmm0   a copy from memory */
        0x0f, 0x29, 0x07,             /* 3:  movaps %xmm0,(%rdi) */
        0x66, 0x0f, 0xef, 0xc9,       /* 6:  pxor %xmm1,%xmm1      zero: int or double */
        0x0f, 0x29, 0x4f, 0x10,       /* 10: movaps %xmm1,0x10(%rdi) */
        0x48, 0x83, 0xc1, 0x01,       /* 14: add $1,%rcx */
        0x0f, 0x29, 0x57, 0x20,       /* 18: movaps %xmm2,0x20(%rdi) xmm2 made before the run */
        0xc3,                         /* 22: ret */
    };
    uint64_t f = map_code(code, sizeof code);
    CHECK(f != 0);
    if (!f)
        return;
    EXPECT_FP(f, sizeof code, 6, ACCESS_STORE, 3, ACCESS_INT);
    EXPECT_FP(f, sizeof code, 14, ACCESS_STORE, 10, ACCESS_INT);
    EXPECT_FP(f, sizeof code, 22, ACCESS_STORE, 18, ACCESS_INT);
}

TEST(loads_are_typed_by_their_consumer)
{
    static const uint8_t code[] = {
        0x0f, 0x10, 0x06,             /* 0:  movups (%rsi),%xmm0 */
        0x0f, 0x58, 0xc8,             /* 3:  addps %xmm0,%xmm1 */
        0xf3, 0x0f, 0x6f, 0x16,       /* 6:  movdqu (%rsi),%xmm2 */
        0x66, 0x0f, 0xfe, 0xda,       /* 10: paddd %xmm2,%xmm3 */
        0x0f, 0x28, 0x26,             /* 14: movaps (%rsi),%xmm4 */
        0x0f, 0x28, 0xec,             /* 17: movaps %xmm4,%xmm5 */
        0x66, 0x0f, 0x59, 0xcd,       /* 20: mulpd %xmm5,%xmm1 */
        0x0f, 0x28, 0x36,             /* 24: movaps (%rsi),%xmm6 */
        0x66, 0x0f, 0xef, 0xf6,       /* 27: pxor %xmm6,%xmm6  overwritten unused */
        0xc3,                         /* 31: ret */
    };
    uint64_t f = map_code(code, sizeof code);
    CHECK(f != 0);
    if (!f)
        return;
    EXPECT_FP(f, sizeof code, 6, ACCESS_LOAD, 0, ACCESS_F32);
    EXPECT_FP(f, sizeof code, 14, ACCESS_LOAD, 6, ACCESS_INT);
    EXPECT_FP(f, sizeof code, 24, ACCESS_LOAD, 14, ACCESS_F64);
    EXPECT_FP(f, sizeof code, 31, ACCESS_LOAD, 24, ACCESS_INT);
    /* Without a boundary behind (decode_access_at) the consumer still shows. */
    mem_access a;
    CHECK_EQ_U(decode_access_at(f, &uc, &a), DROP_NONE);
    CHECK_EQ_U(a.fp, ACCESS_F32);
}

int main(void)
{
    if (decode_init() != 0) {
        printf("decode_init failed\n");
        return 1;
    }
    memset(&uc, 0, sizeof uc);
    uc.uc_mcontext.gregs[REG_RDI] = 0x10000;
    uc.uc_mcontext.gregs[REG_RSI] = 0x20000;
    RUN(integer_vectors_through_movaps_are_integers);
    RUN(integer_vectors_through_movups_are_integers);
    RUN(fp_vectors_are_fp_by_their_producer);
    RUN(scalar_fp_moves_say_so_themselves);
    RUN(each_store_of_a_mixed_run_has_its_own_producer);
    RUN(unknown_producers_make_integers);
    RUN(loads_are_typed_by_their_consumer);
    return HARNESS_EXIT();
}

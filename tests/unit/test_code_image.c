/*
 * test_code_image.c - kept images of functions (src/engine/code_image.c):
 * a sweep that reads one answers exactly as a sweep that decodes, on real
 * code (libc and Zydis, as mapped in this process); an image of code that
 * changed is not used; an image is built once.
 */
#include "harness.h"
#include "code_image.h"
#include "decode_internal.h"
#include "engine.h"

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <sys/mman.h>

/* The end of the executable segment holding pc. */
struct segment_query {
    uint64_t pc, end;
};

static int find_segment(struct dl_phdr_info *info, size_t size, void *data)
{
    struct segment_query *q = data;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uint64_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && lo <= q->pc && q->pc < hi) {
            q->end = hi;
            return 1;
        }
    }
    return 0;
}

static uint64_t segment_end(uint64_t pc)
{
    struct segment_query q = { .pc = pc, .end = 0 };
    dl_iterate_phdr(find_segment, &q);
    return q.end;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Whether the sweeps of [start, end) agree at rip, decoding and reading
 * img: the trap's entry, and the sample's entry, target and end, for
 * stores and for loads. */
static int sweeps_agree(uint64_t rip, uint64_t start, uint64_t end, const code_image *img)
{
    if (decode_sweep(rip, start, end, NULL) != decode_sweep(rip, start, end, img))
        return 0;
    for (uint8_t want = ACCESS_LOAD; want <= ACCESS_STORE; want++) {
        uint64_t t0, e0, t1, e1;
        uint64_t a = decode_sweep_sampled(rip, start, end, NULL, want, rip, &t0, &e0);
        uint64_t b = decode_sweep_sampled(rip, start, end, img, want, rip, &t1, &e1);
        if (a != b || t0 != t1 || e0 != e1)
            return 0;
    }
    return 1;
}

/* The first instruction start at or after pc, decoding from start (the
 * HotSpot debug records a JIT window starts at are such boundaries). */
static uint64_t boundary_from(uint64_t start, uint64_t end, uint64_t pc)
{
    uint64_t at = start;
    ZydisDecodedInstruction in;
    while (at < pc && decode_insn_within(at, end, &in))
        at += in.length;
    return at;
}

/* `span` bytes of real code from name's start (several functions: a
 * sweep does not care), checked at `tries` pcs drawn at random: every
 * other sweep over the whole span (every eighth past the sweep limit when
 * the span reaches it), the others over a window of up to 3 KiB from a
 * boundary, as the JVM gives a JIT blob's (its end may cut an
 * instruction; half of them are at most 24 bytes, to cut more). */
static void check_span(const char *name, uint64_t span, int tries)
{
    uint64_t start = (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, name), end;
    CHECK(start != 0);
    if (!start)
        return;
    end = segment_end(start);
    CHECK(end > start);
    if (end - start > span)
        end = start + span;
    const code_image *img = code_image_of(start, end, CODE_ID_TEXT);
    CHECK(img != NULL);
    int disagree = 0;
    for (int i = 0; i < tries; i++) {
        uint64_t from = start, to = end;
        if (i % 2) {
            from = boundary_from(start, end, start + next_random() % (end - start));
            to = from + 1 + next_random() % (i % 4 == 1 ? 24 : 3072);   /* short ones cut more */
            to = to < end ? to : end;
        }
        if (from >= to)
            continue;
        uint64_t rip = from + next_random() % (to - from);
        if (to - from > DECODE_SWEEP_MAX && i % 8 == 0)
            rip = from + DECODE_SWEEP_MAX + next_random() % (to - from - DECODE_SWEEP_MAX);
        if (!sweeps_agree(rip, from, to, img)) {
            if (!disagree++)
                fprintf(stderr, "  %s+0x%llx (sweep from +0x%llx to +0x%llx): the kept image's sweep differs\n",
                        name, (unsigned long long)(rip - start), (unsigned long long)(from - start),
                        (unsigned long long)(to - start));
        }
    }
    CHECK_EQ_U(disagree, 0);
}

TEST(a_kept_image_sweeps_as_decoding_does)
{
    check_span("qsort", 16 * 1024, 300);
    check_span("regcomp", 24 * 1024, 300);
    check_span("ZydisDecoderDecodeFull", 32 * 1024, 200);
    check_span("ZydisFormatterFormatInstruction", 12 * 1024, 300);
    check_span("printf", 80 * 1024, 120);   /* past DECODE_SWEEP_MAX */
}

/* mov %rax,(%rbx); ret: an instruction ends 3 bytes in. Then movabs
 * $imm,%rax over it: 3 bytes in is inside an instruction. */
static const unsigned char store_ret[] = { 0x48, 0x89, 0x03, 0xc3, 0x90, 0x90, 0x90, 0x90,
                                           0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90 };
static const unsigned char movabs[] = { 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8, 0xc3 };

TEST(an_image_of_code_that_changed_is_not_used)
{
    unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    if (p == MAP_FAILED)
        return;
    uint64_t f = (uint64_t)(uintptr_t)p, end = f + sizeof store_ret;
    memcpy(p, store_ret, sizeof store_ret);
    const code_image *img = code_image_of(f, end, CODE_ID_TEXT);
    CHECK(img != NULL);
    CHECK(((decode_sweep(f + 3, f, end, img) >> 48) & 0xff) == 3);   /* the store ends there */
    memcpy(p, movabs, sizeof movabs);
    img = code_image_of(f, end, CODE_ID_TEXT);
    CHECK_EQ_U(decode_sweep(f + 3, f, end, img), decode_sweep(f + 3, f, end, NULL));
    CHECK(((decode_sweep(f + 3, f, end, img) >> 48) & 0xff) == 0);   /* inside the movabs */
    munmap(p, 4096);
}

TEST(an_image_is_built_once)
{
    uint64_t f = (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "bsearch");
    CHECK(f != 0);
    if (!f)
        return;
    const code_image *a = code_image_of(f, f + 2048, CODE_ID_TEXT);
    uint64_t used = code_image_bytes();
    const code_image *b = code_image_of(f, f + 2048, CODE_ID_TEXT);
    CHECK(a != NULL);
    CHECK(a == b);
    CHECK_EQ_U(code_image_bytes(), used);
    /* Other code at the same addresses (a JIT blob that replaced another)
     * has an image of its own; id 0 keeps none. */
    const code_image *c = code_image_of(f, f + 2048, 0x1000);
    CHECK(c != NULL && c != a);
    CHECK(code_image_of(f, f + 2048, 0) == NULL);
}

int main(void)
{
    if (decode_init() != 0) {
        fprintf(stderr, "decode_init failed\n");
        return 1;
    }
    RUN(a_kept_image_sweeps_as_decoding_does);
    RUN(an_image_of_code_that_changed_is_not_used);
    RUN(an_image_is_built_once);
    return HARNESS_EXIT();
}

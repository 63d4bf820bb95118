/*
 * test_diff.c - `wasp diff`'s matching (src/cli/diff.c): pairs match by
 * function, file and line of both contexts, shares are Eq. 2, delta is
 * B - A, one-sided pairs are marked, order is by |delta|.
 */
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "diff.h"
#include "merge.h"

typedef struct spec {
    const char *fn;        /* leaf function of both contexts */
    uint32_t line;
    const char *insn;
    uint64_t bytes, wasteful;
} spec;

/* The frame below main in model_of's contexts, when set: how the C
 * library's start-up is named (differently by the exact and sampled modes). */
static prof_frame below_main;
/* The caller of every leaf in model_of: main, or what main was inlined into. */
static const char *caller = "main";

/* A one-thread profile whose pair i has watch = trap = specs[i]'s line,
 * called from main (and from below_main, when it has a function). */
static void model_of(merge_model *m, const spec *s, size_t n)
{
    profile p;
    prof_frame frames[16];
    uint32_t below = (uint32_t)(2 * n);
    prof_context ctx[8];
    prof_pair pairs[8];
    uint32_t ids[8][3];
    char err[256];
    memset(&p, 0, sizeof(p));
    strcpy(p.mode, "silent-store");
    strcpy(p.sampler, "exact");
    p.thread_name = p.command = "";
    for (size_t i = 0; i < n; i++) {
        frames[2 * i] = (prof_frame){ (char *)s[i].fn, "t.c", s[i].line, "", 0x1000 + i, (char *)s[i].insn };
        frames[2 * i + 1] = (prof_frame){ (char *)caller, "t.c", 99, "", 0x2000, "" };
        ids[i][0] = (uint32_t)(2 * i);
        ids[i][1] = (uint32_t)(2 * i + 1);
        ids[i][2] = below;
        ctx[i] = (prof_context){ below_main.function ? 3 : 2, ids[i] };
        pairs[i] = (prof_pair){ (uint32_t)i, (uint32_t)i, 1, s[i].bytes, s[i].wasteful, 0 };
    }
    frames[below] = below_main;
    p.frames = frames;
    p.nframes = 2 * n + (below_main.function != NULL);
    p.contexts = ctx;
    p.ncontexts = n;
    p.pairs = pairs;
    p.npairs = n;
    merge_init(m);
    CHECK(merge_add(m, &p, "t.wasp", err, sizeof(err)) == 0);
    merge_finish(m);
}

static const diff_pair *find(const diff_model *d, const char *fn)
{
    for (size_t i = 0; i < d->npairs; i++)
        if (!strcmp(d->pairs[i].watch->frames[0].function, fn))
            return &d->pairs[i];
    return NULL;
}

/* Native runs: the exact mode names libc's start-up from its debug info,
 * the sampled one by module and offset; the pairs still match. */
TEST(diff_matches_contexts_up_to_main)
{
    static const spec s[] = { { "kernel", 10, "mov", 800, 400 } };
    merge_model a, b;
    diff_model d;
    below_main = (prof_frame){ "__libc_start_call_main", "libc_start_call_main.h", 58, "libc.so.6", 0x3000, "" };
    model_of(&a, s, 1);
    below_main = (prof_frame){ "[libc.so.6+0x2724a]", "", 0, "libc.so.6", 0x3000, "" };
    model_of(&b, s, 1);
    below_main = (prof_frame){ 0 };
    CHECK(diff_build(&d, &a, &b) == 0);
    CHECK_EQ_U(d.npairs, 1);
    CHECK(d.npairs == 1 && d.pairs[0].in_a && d.pairs[0].in_b);
    diff_free(&d);
    merge_free(&a);
    merge_free(&b);
    /* main inlined into its caller's frame: the start-up frames still do
     * not count (brotli's CompressFile sits right above libc). */
    caller = "CompressFile";
    below_main = (prof_frame){ "__libc_start_call_main", "libc_start_call_main.h", 58, "libc.so.6", 0x3000, "" };
    model_of(&a, s, 1);
    below_main = (prof_frame){ "[libc.so.6+0x2724a]", "", 0, "libc.so.6", 0x3000, "" };
    model_of(&b, s, 1);
    below_main = (prof_frame){ 0 };
    caller = "main";
    CHECK(diff_build(&d, &a, &b) == 0);
    CHECK(d.npairs == 1 && d.pairs[0].in_a && d.pairs[0].in_b);
    diff_free(&d);
    merge_free(&a);
    merge_free(&b);
}

TEST(diff_of_a_run_with_itself_is_all_zero)
{
    static const spec s[] = { { "kernel", 10, "mov", 800, 400 }, { "other", 20, "mov", 200, 10 } };
    merge_model a, b;
    diff_model d;
    model_of(&a, s, 2);
    model_of(&b, s, 2);
    CHECK(diff_build(&d, &a, &b) == 0);
    CHECK_EQ_U(d.npairs, 2);
    CHECK(d.fraction_delta == 0);
    for (size_t i = 0; i < d.npairs; i++) {
        CHECK(d.pairs[i].delta == 0);
        CHECK(d.pairs[i].in_a && d.pairs[i].in_b);
        CHECK(d.pairs[i].a_share > 0);
    }
    diff_free(&d);
    merge_free(&a);
    merge_free(&b);
}

TEST(diff_matches_by_line_marks_one_sided_pairs_and_orders_by_change)
{
    /* A: kernel 400/1000 wasteful, gone 100/1000. B: kernel (another
     * instruction, same line) 100/1000, fresh 300/1000. */
    static const spec sa[] = { { "kernel", 10, "movq %rax,(%rdx)", 800, 400 }, { "gone", 20, "mov", 200, 100 } };
    static const spec sb[] = { { "kernel", 10, "movl %eax,(%rdx)", 500, 100 }, { "fresh", 30, "mov", 500, 300 } };
    merge_model a, b;
    diff_model d;
    model_of(&a, sa, 2);
    model_of(&b, sb, 2);
    CHECK(diff_build(&d, &a, &b) == 0);
    CHECK_EQ_U(d.npairs, 3);
    CHECK(fabs(d.fraction_delta - (0.4 - 0.5)) < 1e-12);
    const diff_pair *k = find(&d, "kernel"), *g = find(&d, "gone"), *f = find(&d, "fresh");
    CHECK(k && g && f);
    if (k && g && f) {
        CHECK(k->in_a && k->in_b);
        CHECK(fabs(k->delta - (0.1 - 0.4)) < 1e-12);
        CHECK(g->in_a && !g->in_b && fabs(g->delta + 0.1) < 1e-12);
        CHECK(!f->in_a && f->in_b && fabs(f->delta - 0.3) < 1e-12);
    }
    for (size_t i = 1; i < d.npairs; i++)
        CHECK(fabs(d.pairs[i - 1].delta) >= fabs(d.pairs[i].delta));
    diff_free(&d);
    merge_free(&a);
    merge_free(&b);
}

TEST(diff_of_different_lines_does_not_match)
{
    static const spec sa[] = { { "kernel", 10, "mov", 100, 50 } };
    static const spec sb[] = { { "kernel", 11, "mov", 100, 50 } };
    merge_model a, b;
    diff_model d;
    model_of(&a, sa, 1);
    model_of(&b, sb, 1);
    CHECK(diff_build(&d, &a, &b) == 0);
    CHECK_EQ_U(d.npairs, 2);
    CHECK(d.fraction_delta == 0);
    for (size_t i = 0; i < d.npairs; i++)
        CHECK(d.pairs[i].in_a != d.pairs[i].in_b);
    diff_free(&d);
    merge_free(&a);
    merge_free(&b);
}

int main(void)
{
    RUN(diff_of_a_run_with_itself_is_all_zero);
    RUN(diff_matches_contexts_up_to_main);
    RUN(diff_matches_by_line_marks_one_sided_pairs_and_orders_by_change);
    RUN(diff_of_different_lines_does_not_match);
    return HARNESS_EXIT();
}

/*
 * test_html.c - the HTML and collapsed report writers (out_html.c,
 * out_collapsed.c) and their selection in `wasp report`: hostile names stay
 * text, the template is filled once, a 100k-pair run gives a small file
 * fast with the cap said in the data, collapsed stacks are root first with
 * the separator kept out of names, and -o picks the format by extension.
 */
#include "harness.h"
#include "merge.h"
#include "out_collapsed.h"
#include "out_html.h"
#include "profile.h"
#include "report.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- building models in memory ---- */

typedef struct fake {
    prof_frame *frames;   size_t nframes;
    prof_context *ctxs;   size_t nctxs;
    uint32_t *ids;        size_t nids;
    prof_pair *pairs;     size_t npairs;
} fake;

static uint32_t fake_frame(fake *f, const char *fn, const char *file, uint32_t line,
                           const char *insn)
{
    f->frames[f->nframes] = (prof_frame){ (char *)fn, (char *)file, line, "/bin/x",
                                          0x1000 + f->nframes, (char *)insn };
    return (uint32_t)f->nframes++;
}

/* A context of the given frames, leaf first. */
static uint32_t fake_ctx(fake *f, size_t n, const uint32_t *frames)
{
    uint32_t *ids = &f->ids[f->nids];
    memcpy(ids, frames, n * sizeof *ids);
    f->nids += n;
    f->ctxs[f->nctxs] = (prof_context){ (uint32_t)n, ids };
    return (uint32_t)f->nctxs++;
}

static void fake_pair(fake *f, uint32_t w, uint32_t t, uint64_t wasteful, uint64_t approx)
{
    f->pairs[f->npairs++] = (prof_pair){ w, t, 1, wasteful + approx + 8, wasteful, approx };
}

static void fake_alloc(fake *f, size_t frames, size_t ctxs, size_t pairs)
{
    memset(f, 0, sizeof *f);
    f->frames = calloc(frames, sizeof *f->frames);
    f->ctxs = calloc(ctxs, sizeof *f->ctxs);
    f->ids = calloc(ctxs * 4, sizeof *f->ids);
    f->pairs = calloc(pairs, sizeof *f->pairs);
}

static void fake_free(fake *f)
{
    free(f->frames);
    free(f->ctxs);
    free(f->ids);
    free(f->pairs);
}

static int fake_model(merge_model *m, const fake *f, const char *mode)
{
    prof_stat stats[] = { { "samples", 100 }, { "traps", 10 }, { "sample_ns", 500000 },
                          { "trap_ns", 100000 }, { "drop.not_memory", 3 } };
    profile p = { 0 };
    snprintf(p.mode, sizeof p.mode, "%s", mode);
    strcpy(p.sampler, "software");
    p.pid = p.tid = 42;
    p.thread_name = p.command = "";
    p.interval = 1000000;
    p.fp_tolerance = 0.01;
    p.stats = stats; p.nstats = sizeof stats / sizeof stats[0];
    p.frames = f->frames; p.nframes = f->nframes;
    p.contexts = f->ctxs; p.ncontexts = f->nctxs;
    p.pairs = f->pairs; p.npairs = f->npairs;
    char err[256];
    merge_init(m);
    if (merge_add(m, &p, "memory", err, sizeof err) != 0) {
        fprintf(stderr, "  %s\n", err);
        return -1;
    }
    merge_finish(m);
    return 0;
}

/* Renders with fn into a heap string. */
typedef int (*render_fn)(FILE *, const merge_model *, size_t);

static char *render(render_fn fn, const merge_model *m, size_t arg, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f) return NULL;
    int rc = fn(f, m, arg);
    fclose(f);
    if (rc != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static int collapsed_fn(FILE *f, const merge_model *m, size_t side)
{
    return collapsed_write_report(f, m, (enum collapsed_side)side);
}

static size_t count_of(const char *doc, const char *needle)
{
    size_t n = 0;
    for (const char *p = doc; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

/* Nodes of one icicle tree in the data: "[code,wasteful,approx" from the
 * tree's "root": up to the next tree or the end of the flame object. */
static size_t tree_nodes(const char *doc, const char *name)
{
    char key[32];
    snprintf(key, sizeof key, "\"%s\":{\"threshold\"", name);
    const char *at = strstr(doc, key), *end = at ? strstr(at + 1, "}") : NULL;
    size_t n = 0;
    for (const char *p = at; p && p < end; p++) {
        long long code;
        unsigned long long w, a;
        if (*p == '[' && (sscanf(p, "[%lld,%llu,%llu", &code, &w, &a) == 3 ||
                          sscanf(p, "[null,%llu,%llu", &w, &a) == 2))
            n++;
    }
    return n;
}

/* ---- HTML ---- */

static const char *const HOSTILE = "<script>alert(1)</script>";

TEST(hostile_names_are_escaped)
{
    fake f;
    merge_model m;
    fake_alloc(&f, 8, 4, 2);
    uint32_t evil = fake_frame(&f, HOSTILE, "a\"b</script><!--.c", 3, "mov <%rax>,(%rdx)");
    uint32_t bad = fake_frame(&f, "bad\xff utf8 \xe2\x80\xa8 sep", "&amp;.c", 4,
                              "movq %rax,(%rdx)");
    uint32_t main_ = fake_frame(&f, "main", "x.c", 9, "");
    uint32_t c1 = fake_ctx(&f, 2, (uint32_t[]){ evil, main_ });
    uint32_t c2 = fake_ctx(&f, 2, (uint32_t[]){ bad, main_ });
    fake_pair(&f, c1, c2, 64, 0);
    if (fake_model(&m, &f, "silent-store") != 0) { CHECK(0); return; }
    size_t len;
    char *doc = render(html_write_report, &m, 0, &len);
    CHECK(doc != NULL);
    if (doc) {
        /* The only tags are the template's own: two script elements. */
        CHECK_EQ_U(count_of(doc, "<script"), 2);
        CHECK_EQ_U(count_of(doc, "</script>"), 2);
        CHECK(strstr(doc, "alert(1)</script>") == NULL);
        CHECK(strstr(doc, "\"\\u003cscript\\u003ealert(1)\\u003c/script\\u003e\"") != NULL);
        CHECK(strstr(doc, "\"a\\\"b\\u003c/script\\u003e\\u003c!--.c\"") != NULL);
        CHECK(strstr(doc, "\"mov \\u003c%rax\\u003e,(%rdx)\"") != NULL);
        CHECK(strstr(doc, "\"bad\\ufffd utf8 \\u2028 sep\"") != NULL);
        CHECK(strstr(doc, "\"\\u0026amp;.c\"") != NULL);
        CHECK(strstr(doc, "@WASP_DATA@") == NULL);
        CHECK(strncmp(doc, "<!DOCTYPE html>", 15) == 0);
        CHECK(len > 7 && strcmp(doc + len - 8, "</html>\n") == 0);
        CHECK(strstr(doc, "\"pairs_total\":1,\"pairs_shown\":1") != NULL);
    }
    free(doc);
    merge_free(&m);
    fake_free(&f);
}

TEST(empty_run_still_renders)
{
    fake f;
    merge_model m;
    fake_alloc(&f, 1, 1, 1);
    if (fake_model(&m, &f, "dead-store") != 0) { CHECK(0); return; }
    char *doc = render(html_write_report, &m, 0, &(size_t){ 0 });
    CHECK(doc != NULL);
    if (doc) {
        CHECK(strstr(doc, "\"pairs\":[]") != NULL);
        CHECK(strstr(doc, "\"watch\":{\"threshold\":1,\"hidden\":0,\"root\":[null,0,0]}") != NULL);
    }
    free(doc);
    merge_free(&m);
    fake_free(&f);
}

/* A pair found once holding most of the bytes: the page's data carries it
 * for the note (docs/report.md, "one pair decides"); an even run does not. */
TEST(a_deciding_pair_reaches_the_page)
{
    fake f;
    merge_model m;
    fake_alloc(&f, 2, 2, 2);
    uint32_t a = fake_frame(&f, "fast", "x.c", 1, "movb $0,(%rax)"), b = fake_frame(&f, "slow", "x.c", 2, "incl (%rdx)");
    uint32_t ca = fake_ctx(&f, 1, &a), cb = fake_ctx(&f, 1, &b);
    f.pairs[f.npairs++] = (prof_pair){ ca, ca, 100, 1000, 900, 0 };
    f.pairs[f.npairs++] = (prof_pair){ cb, cb, 1, 9000, 0, 0 };
    if (fake_model(&m, &f, "silent-store") != 0) { CHECK(0); return; }
    char *doc = render(html_write_report, &m, 0, &(size_t){ 0 });
    CHECK(doc && strstr(doc, "\"heaviest\":{\"rank\":2,\"count\":1,\"share\":0.900000,\"without\":0.900000}"));
    free(doc);
    merge_free(&m);
    f.pairs[1].count = 100;   /* found as often as the other: planted, not heavy */
    if (fake_model(&m, &f, "silent-store") != 0) { CHECK(0); return; }
    doc = render(html_write_report, &m, 0, &(size_t){ 0 });
    CHECK(doc && !strstr(doc, "\"heaviest\""));
    free(doc);
    merge_free(&m);
    fake_free(&f);
}

/* 100k pairs of distinct contexts: the first 9000 heavy enough (1/9000 of
 * the waste each) that the graph's node cap, not the width rule, must cut. */
#define BIG 100000
#define HEAVY 9000

TEST(large_profile_is_capped_and_fast)
{
    static char names[BIG][16];
    fake f;
    merge_model m;
    fake_alloc(&f, BIG + 102, BIG, BIG);
    uint32_t main_ = fake_frame(&f, "main", "big.c", 1, "");
    uint32_t mid[100];
    for (int i = 0; i < 100; i++)
        mid[i] = fake_frame(&f, "dispatch", "big.c", 10 + (uint32_t)i, "");
    for (size_t i = 0; i < BIG; i++) {
        snprintf(names[i], sizeof names[i], "leaf_%zu", i);
        uint32_t leaf = fake_frame(&f, names[i], "big.c", 1000 + (uint32_t)i, "movq %rax,(%rdx)");
        fake_ctx(&f, 3, (uint32_t[]){ leaf, mid[i % 100], main_ });
    }
    for (size_t i = 0; i < BIG; i++)
        fake_pair(&f, (uint32_t)i, (uint32_t)((i + 1) % BIG), i < HEAVY ? 1000000 + i : 1, 0);
    if (fake_model(&m, &f, "silent-store") != 0) { CHECK(0); return; }

    /* Size, not time: a wall-clock bound fails on a loaded machine. */
    size_t len = 0;
    char *doc = render(html_write_report, &m, HTML_DEFAULT_TOP, &len);
    CHECK(doc != NULL);
    if (doc) {
        CHECK(len < 2 * 1024 * 1024);
        CHECK(strstr(doc, "\"pairs_total\":100000,\"pairs_shown\":2000") != NULL);
        /* Names only of what is shown: the 2000 pairs' 2001 leaves and the
         * graphs' at most 8000 nodes, not all 100k. */
        size_t leaves = count_of(doc, "\"leaf_");
        CHECK(leaves >= 2001 && leaves <= 2001 + 8000);
        size_t nw = tree_nodes(doc, "watch"), nt = tree_nodes(doc, "trap");
        CHECK(nw > 4000 && nw <= 8001);
        CHECK(nt > 4000 && nt <= 8001);
        CHECK(strstr(doc, "\"hidden\":0,") == NULL);
    }
    free(doc);
    merge_free(&m);
    fake_free(&f);
}

/* ---- disassembly of JIT code ---- */

/* push %rbp; mov %rsp,%rbp; mov %rax,0x10(%rsi); add $1,%rax;
 * mov %rax,0x18(%rsi); pop %rbp; ret */
static uint8_t kernel_bytes[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0x46, 0x10, 0x48, 0x83,
                                  0xc0, 0x01, 0x48, 0x89, 0x46, 0x18, 0x5d, 0xc3 };
static prof_code_line kernel_lines[] = {
    { 0, 10, "Demo.kernel", "Demo.java" },
    { 4, 11, "Demo.kernel", "Demo.java" },
    { 8, 40, "Demo.<init>", "Bump.java" },      /* an inlined callee */
    { 12, 12, "Demo.kernel", "Demo.java" },
};
#define KBASE 0x7f0000001000ull

static prof_code kernel_code(void)
{
    return (prof_code){ "Demo.kernel", KBASE, sizeof kernel_bytes, kernel_bytes,
                        sizeof kernel_lines / sizeof kernel_lines[0], kernel_lines };
}

/* One thread's profile of f's frames, contexts and pairs, with codes. */
static profile code_profile(const fake *f, prof_code *codes, size_t ncodes, int64_t pid)
{
    profile p = { 0 };
    strcpy(p.mode, "silent-store");
    strcpy(p.sampler, "software");
    p.pid = p.tid = pid;
    p.thread_name = p.command = "";
    p.interval = 1000000;
    p.frames = f->frames; p.nframes = f->nframes;
    p.contexts = f->ctxs; p.ncontexts = f->nctxs;
    p.pairs = f->pairs; p.npairs = f->npairs;
    p.codes = codes; p.ncodes = ncodes;
    return p;
}

/* Merges the profiles into m and renders the page; NULL on error. */
static char *code_page(merge_model *m, const profile *ps, size_t n)
{
    char err[256];
    merge_init(m);
    for (size_t i = 0; i < n; i++) {
        if (merge_add(m, &ps[i], "memory", err, sizeof err) != 0) {
            fprintf(stderr, "  %s\n", err);
            return NULL;
        }
    }
    merge_finish(m);
    return render(html_write_report, m, 0, &(size_t){ 0 });
}

static void code_done(char *doc, merge_model *m, fake *f)
{
    free(doc);
    merge_free(m);
    fake_free(f);
}

/* A pair whose both instructions lie in one JIT-compiled method: the page
 * holds its disassembly, both syntaxes, with source lines and the inlined
 * callee named; the contexts point at it. The same code from a second
 * process counts once, and a context first seen in the interpreter (no
 * code) takes the JIT instruction when one comes. */
TEST(jit_code_is_disassembled)
{
    fake f, g;
    merge_model m;
    fake_alloc(&f, 4, 2, 1);
    uint32_t w = fake_frame(&f, "Demo.kernel", "Demo.java", 11, "mov %rax, 0x10(%rsi)");
    uint32_t t = fake_frame(&f, "Demo.kernel", "Demo.java", 12, "mov %rax, 0x18(%rsi)");
    uint32_t main_ = fake_frame(&f, "Demo.main", "Demo.java", 3, "");
    f.frames[w].pc = KBASE + 4;
    f.frames[t].pc = KBASE + 12;
    fake_pair(&f, fake_ctx(&f, 2, (uint32_t[]){ w, main_ }),
              fake_ctx(&f, 2, (uint32_t[]){ t, main_ }), 64, 0);
    /* the interpreter's view of the same pair, seen first */
    fake_alloc(&g, 4, 2, 1);
    w = fake_frame(&g, "Demo.kernel", "Demo.java", 11, "interpreted");
    t = fake_frame(&g, "Demo.kernel", "Demo.java", 12, "interpreted");
    main_ = fake_frame(&g, "Demo.main", "Demo.java", 3, "");
    fake_pair(&g, fake_ctx(&g, 2, (uint32_t[]){ w, main_ }),
              fake_ctx(&g, 2, (uint32_t[]){ t, main_ }), 8, 0);
    prof_code code = kernel_code(), other = kernel_code();
    other.start = 0x7e0000000000;   /* somewhere the pcs of g are not */
    profile ps[] = { code_profile(&g, &other, 1, 7), code_profile(&f, &code, 1, 8),
                     code_profile(&f, &code, 1, 9) };
    char *doc = code_page(&m, ps, 3);
    CHECK(doc != NULL);
    CHECK_EQ_U(m.ncodes, 1);
    CHECK_EQ_U(m.ncontexts, 2);
    for (size_t i = 0; i < m.ncontexts; i++) {
        CHECK(m.contexts[i]->code == 0);
        CHECK(strcmp(m.contexts[i]->instruction, "interpreted") != 0);
    }
    if (doc) {
        CHECK(strstr(doc, "\"code\":[{\"name\":\"Demo.kernel\",\"file\":\"Demo.java\","
                          "\"start\":\"0x7f0000001000\",\"size\":18,\"insns\":[\n"
                          "[\"0x7f0000001000\",10,\"push %rbp\",\"push rbp\",0],\n"
                          "[\"0x7f0000001001\",10,\"mov %rsp, %rbp\",\"mov rbp, rsp\",0],\n"
                          "[\"0x7f0000001004\",11,\"mov %rax, 0x10(%rsi)\",\"mov [rsi+0x10], rax\",0],\n"
                          "[\"0x7f0000001008\",40,\"add $0x01, %rax\",\"add rax, 0x01\",1],\n"
                          "[\"0x7f000000100c\",12,\"mov %rax, 0x18(%rsi)\",\"mov [rsi+0x18], rax\",0],\n"
                          "[\"0x7f0000001010\",12,\"pop %rbp\",\"pop rbp\",0],\n"
                          "[\"0x7f0000001011\",12,\"ret\",\"ret\",0]],\n"
                          "\"srcs\":[[\"\",\"Demo.java\"],[\"Demo.\\u003cinit\\u003e\",\"Bump.java\"]]}],\n"
                          "\"code_cap\":{\"max_blobs\":200,\"max_insns\":20000,\"around\":100,"
                          "\"left_out\":0,\"partial\":0}}") != NULL);
        CHECK_EQ_U(count_of(doc, ",0,\"0x7f0000001004\"]"), 1);
        CHECK_EQ_U(count_of(doc, ",0,\"0x7f000000100c\"]"), 1);
        CHECK_EQ_U(count_of(doc, "<script"), 2);
    }
    code_done(doc, &m, &f);
    fake_free(&g);
}

/* Where a context's pc lies inside what the sweep would decode as one
 * instruction (data before it, or a jump into the middle), the sweep stops
 * there: the bytes before show as .byte, one a row, and the pc starts a
 * row. */
TEST(code_sweep_resyncs_at_context_pcs)
{
    static uint8_t bytes[] = { 0x48, 0xb8, 0x48, 0x89, 0x46, 0x10, 0xc3, 0, 0, 0, 0xc3 };
    prof_code code = { "Jump.in", 0x5000, sizeof bytes, bytes, 0, NULL };
    fake f;
    merge_model m;
    fake_alloc(&f, 2, 1, 1);
    uint32_t a = fake_frame(&f, "Jump.in", "", 0, "mov %rax, 0x10(%rsi)");
    f.frames[a].pc = 0x5002;    /* inside movabs $imm64, %rax */
    uint32_t c = fake_ctx(&f, 1, &a);
    fake_pair(&f, c, c, 8, 0);
    profile p = code_profile(&f, &code, 1, 1);
    char *doc = code_page(&m, &p, 1);
    CHECK(doc != NULL);
    if (doc) {
        CHECK(strstr(doc, "[\"0x5000\",0,\".byte 0x48\",\".byte 0x48\"],\n"
                          "[\"0x5001\",0,\".byte 0xb8\",\".byte 0xb8\"],\n"
                          "[\"0x5002\",0,\"mov %rax, 0x10(%rsi)\",\"mov [rsi+0x10], rax\"],\n"
                          "[\"0x5006\",0,\"ret\",\"ret\"],\n") != NULL);
        CHECK(strstr(doc, "\"file\":\"\"") != NULL);
        CHECK(strstr(doc, ",0,\"0x5002\"]") != NULL);
    }
    code_done(doc, &m, &f);
}

/* 251 methods: the page holds 200 and says 51 are left out (their contexts
 * point at -1), the lightest pairs' ones; a method of 30000 instructions
 * keeps 100 either side of each named instruction, with the runs left out
 * counted. */
#define NBLOBS 250
#define NNOPS 30000

TEST(code_is_capped)
{
    static uint8_t nops[NNOPS];
    static prof_code codes[NBLOBS + 1];
    static char names[NBLOBS][16];
    memset(nops, 0x90, sizeof nops);
    fake f;
    merge_model m;
    fake_alloc(&f, NBLOBS + 2, NBLOBS + 2, NBLOBS + 1);
    for (size_t i = 0; i < NBLOBS; i++) {
        snprintf(names[i], sizeof names[i], "M.m%zu", i);
        codes[i] = kernel_code();
        codes[i].name = names[i];
        codes[i].start = 0x100000 + 0x100 * i;
        uint32_t a = fake_frame(&f, names[i], "M.java", 1, "mov %rax, 0x10(%rsi)");
        f.frames[a].pc = codes[i].start + 4;
        uint32_t c = fake_ctx(&f, 1, &a);
        fake_pair(&f, c, c, 1000 - i, 0);   /* in order of weight */
    }
    codes[NBLOBS] = (prof_code){ "Big.run", 0x900000, NNOPS, nops, 0, NULL };
    uint32_t a = fake_frame(&f, "Big.run", "Big.java", 1, "nop");
    uint32_t b = fake_frame(&f, "Big.run", "Big.java", 2, "nop");
    f.frames[a].pc = 0x900000 + 100;
    f.frames[b].pc = 0x900000 + 20000;
    fake_pair(&f, fake_ctx(&f, 1, &a), fake_ctx(&f, 1, &b), 5000, 0);   /* the top pair */
    profile p = code_profile(&f, codes, NBLOBS + 1, 1);
    char *doc = code_page(&m, &p, 1);
    CHECK(doc != NULL);
    if (doc) {
        CHECK(strstr(doc, "\"left_out\":51,\"partial\":1}") != NULL);
        CHECK(strstr(doc, "[\"0x9000c8\",0,\"nop\",\"nop\"],19699,\n[\"0x904dbc\"") != NULL);
        CHECK(strstr(doc, "[\"0x904e84\",0,\"nop\",\"nop\"],9899]") != NULL);
        CHECK(strstr(doc, ",0,\"0x900064\"]") != NULL && strstr(doc, ",0,\"0x904e20\"]") != NULL);
        CHECK_EQ_U(count_of(doc, "{\"name\":"), 200);
        CHECK_EQ_U(count_of(doc, ",-1,\"0x"), 51);
        CHECK(strstr(doc, "\"name\":\"M.m198\"") != NULL);
        CHECK(strstr(doc, "\"name\":\"M.m199\"") == NULL);
    }
    code_done(doc, &m, &f);
}

/* ---- collapsed ---- */

TEST(collapsed_stacks_are_root_first)
{
    fake f;
    merge_model m;
    fake_alloc(&f, 8, 4, 4);
    uint32_t a = fake_frame(&f, "store;er", "a.c", 5, "movq %rax,(%rdx)");
    uint32_t b = fake_frame(&f, "kill\ner", "b.c", 6, "movl %eax,(%rcx)");
    uint32_t main_ = fake_frame(&f, "main", "m.c", 9, "");
    uint32_t ca = fake_ctx(&f, 2, (uint32_t[]){ a, main_ });
    uint32_t cb = fake_ctx(&f, 2, (uint32_t[]){ b, main_ });
    fake_pair(&f, ca, cb, 24, 8);
    fake_pair(&f, cb, cb, 16, 0);
    if (fake_model(&m, &f, "silent-store") != 0) { CHECK(0); return; }
    char *watch = render(collapsed_fn, &m, COLLAPSED_WATCH, &(size_t){ 0 });
    char *trap = render(collapsed_fn, &m, COLLAPSED_TRAP, &(size_t){ 0 });
    char *deflt = render(collapsed_fn, &m, COLLAPSED_WASTEFUL, &(size_t){ 0 });
    CHECK_STR(watch, "main (m.c:9);store:er (a.c:5);[movq %rax,(%rdx)] 32\n"
                     "main (m.c:9);kill?er (b.c:6);[movl %eax,(%rcx)] 16\n");
    CHECK_STR(trap, "main (m.c:9);kill?er (b.c:6);[movl %eax,(%rcx)] 48\n");
    CHECK_STR(deflt, trap);     /* a silent store wastes at C2 */
    CHECK_EQ_U(collapsed_wasteful_side("dead-store"), COLLAPSED_WATCH);
    CHECK_EQ_U(collapsed_wasteful_side("silent-load"), COLLAPSED_TRAP);
    free(watch);
    free(trap);
    free(deflt);
    merge_free(&m);
    fake_free(&f);
}

/* ---- wasp report -o ---- */

static char tmpdir[256];

static const char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int next;
    char *b = buf[next++ & 3];
    snprintf(b, sizeof buf[0], "%s/%s", tmpdir, name);
    return b;
}

static int report(const char *a, const char *b, const char *c, const char *d, const char *e)
{
    char *argv[] = { "report", (char *)a, (char *)b, (char *)c, (char *)d, (char *)e, NULL };
    int argc = 1;
    while (argv[argc]) argc++;
    return report_main(argc, argv);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = calloc(1, 1 << 20);
    if (buf) fread(buf, 1, (1 << 20) - 1, f);
    fclose(f);
    return buf;
}

TEST(format_follows_extension_unless_given)
{
    fake f;
    fake_alloc(&f, 4, 2, 1);
    uint32_t a = fake_frame(&f, "fill", "c.c", 3, "movq %rax,(%rdx)");
    uint32_t c = fake_ctx(&f, 1, &a);
    fake_pair(&f, c, c, 8, 0);
    profile p = { 0 };
    strcpy(p.mode, "silent-store");
    strcpy(p.sampler, "software");
    p.pid = p.tid = 7;
    p.thread_name = p.command = "";
    p.frames = f.frames; p.nframes = f.nframes;
    p.contexts = f.ctxs; p.ncontexts = f.nctxs;
    p.pairs = f.pairs; p.npairs = f.npairs;
    char err[256];
    mkdir(tmp_path("run"), 0755);
    CHECK(profile_write(&p, tmp_path("run/7.wasp"), err, sizeof err) == 0);
    const char *run = strdup(tmp_path("run"));

    CHECK_EQ_U(report(run, "-o", tmp_path("r.html"), NULL, NULL), 0);
    char *doc = slurp(tmp_path("r.html"));
    CHECK(doc && strncmp(doc, "<!DOCTYPE html>", 15) == 0);
    free(doc);
    CHECK_EQ_U(report(run, "-o", tmp_path("r.collapsed"), NULL, NULL), 0);
    doc = slurp(tmp_path("r.collapsed"));
    CHECK_STR(doc, "fill (c.c:3);[movq %rax,(%rdx)] 8\n");
    free(doc);
    CHECK_EQ_U(report(run, "-o", tmp_path("r.txt"), NULL, NULL), 0);
    doc = slurp(tmp_path("r.txt"));
    CHECK(doc && strncmp(doc, "wasp report: silent-store", 25) == 0);
    free(doc);
    CHECK_EQ_U(report(run, "--format", "html", "-o", tmp_path("r.json")), 0);
    doc = slurp(tmp_path("r.json"));
    CHECK(doc && strncmp(doc, "<!DOCTYPE html>", 15) == 0);
    free(doc);
    CHECK_EQ_U(report(run, "--format=collapsed", "--side=watch", "-o", tmp_path("w.txt")), 0);
    doc = slurp(tmp_path("w.txt"));
    CHECK_STR(doc, "fill (c.c:3);[movq %rax,(%rdx)] 8\n");
    free(doc);
    fprintf(stderr, "  (two usage errors expected below)\n");
    CHECK_EQ_U(report(run, "--side", "both", NULL, NULL), 2);
    CHECK_EQ_U(report(run, "--format", "svg", NULL, NULL), 2);
    free((char *)run);
    fake_free(&f);
}

int main(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/wasp-test-html.XXXXXX", t ? t : "/tmp");
    if (!mkdtemp(tmpdir)) return 1;
    RUN(hostile_names_are_escaped);
    RUN(empty_run_still_renders);
    RUN(a_deciding_pair_reaches_the_page);
    RUN(large_profile_is_capped_and_fast);
    RUN(jit_code_is_disassembled);
    RUN(code_sweep_resyncs_at_context_pcs);
    RUN(code_is_capped);
    RUN(collapsed_stacks_are_root_first);
    RUN(format_follows_extension_unless_given);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return HARNESS_EXIT();
}

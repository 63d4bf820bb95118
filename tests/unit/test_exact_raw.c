/*
 * test_exact_raw.c - the exact tool's raw file and its conversion
 * (src/cli/exact_raw.c, exact_convert.c): records parsed, contexts rebuilt
 * leaf first from the call-site chain, the approximate bytes taken by the
 * C1 instruction's element type (double, float, integer), damaged files
 * refused, and JIT code: each profile keeps the code its leaves ran in,
 * never code that would show a leaf inside other code.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "exact_convert.h"
#include "exact_raw.h"
#include "profile.h"

/* Leaves: 1 = movsd %xmm0,(%rdi) (F64), 2 = mov %rax,(%rdi) (integer),
 * 3 = movss %xmm0,(%rdi) (F32); all called from main through node 1. */
static const char RAW[] =
    "wasp-exact\t2\nmode\tsilent-store\npid\t4242\ncommand\t./prog 1\nfp_tolerance\t0.01\n"
    "written\texit\ninstructions\t0\ncut\t0\n"
    "thread\t1\t4242\nstat\t1\taccesses\t100\nstat\t1\tpairs\t90\nstat\t1\tdrop.stack\t3\n"
    "thread\t2\t4243\n"
    "node\t1\t0\t0x1000\tmain\tprog.c\t40\t/bin/prog\n"
    "leaf\t1\t1\t0x2000\tupdate\tprog.c\t10\t/bin/prog\tf20f1107\t0\n"
    "leaf\t2\t1\t0x2010\tkernel\tprog.c\t20\t/bin/prog\t488907\t0\n"
    "leaf\t3\t1\t0x2020\tsingle\tprog.c\t30\t/bin/prog\tf30f1107\t0\n"
    "pair\t1\t1\t1\t10\t80\t0\t40\t8\n"
    "pair\t1\t2\t2\t10\t80\t16\t40\t40\n"
    "pair\t1\t3\t3\t10\t40\t0\t12\t20\n"
    "end\n";

TEST(raw_parses_and_decodes_leaf_instructions)
{
    char *buf = strdup(RAW), err[256];
    exact_raw r;
    CHECK(exact_raw_parse(buf, &r, err, sizeof(err)) == 0);
    CHECK_STR(r.mode, "silent-store");
    CHECK_EQ_U(r.pid, 4242);
    CHECK_EQ_U(r.nthreads, 2);
    CHECK_EQ_U(r.npairs, 3);
    CHECK_EQ_U(r.leaves[1].fp, 8);
    CHECK_EQ_U(r.leaves[2].fp, 0);
    CHECK_EQ_U(r.leaves[3].fp, 4);
    CHECK(strstr(r.leaves[1].instruction, "movsd") != NULL);
    CHECK_EQ_U(exact_raw_stat(&r.threads[0], "drop.stack"), 3);
    exact_raw_free(&r);
    free(buf);
}

TEST(raw_refuses_damaged_files)
{
    char err[256];
    exact_raw r;
    char *cut = strdup(RAW);
    cut[strlen(cut) - 4] = '\0';   /* no end record */
    CHECK(exact_raw_parse(cut, &r, err, sizeof(err)) < 0);
    CHECK(strstr(err, "truncated") != NULL);
    char *dangling = strdup(RAW);
    memcpy(strstr(dangling, "pair\t1\t3\t3"), "pair\t1\t9\t3", 10);
    CHECK(exact_raw_parse(dangling, &r, err, sizeof(err)) < 0);
    char *foreign = strdup("wasp-profile\t1\nend\n");
    char *old = strdup("wasp-exact\t1\nend\n");
    CHECK(exact_raw_parse(old, &r, err, sizeof(err)) < 0);
    CHECK(strstr(err, "version 2") != NULL);
    free(old);
    CHECK(exact_raw_parse(foreign, &r, err, sizeof(err)) < 0);
    /* A fold naming no thread, or more wasteful bytes than bytes. */
    char *fold = malloc(sizeof(RAW) + 64);
    snprintf(fold, sizeof(RAW) + 64, "%.*sfold\t7\t1\t8\t0\nend\n", (int)(sizeof(RAW) - 5), RAW);
    CHECK(exact_raw_parse(fold, &r, err, sizeof(err)) < 0);
    CHECK(strstr(err, "bad fold record") != NULL);
    snprintf(fold, sizeof(RAW) + 64, "%.*sunnamed\t1\t1\t8\t9\nend\n", (int)(sizeof(RAW) - 5), RAW);
    CHECK(exact_raw_parse(fold, &r, err, sizeof(err)) < 0);
    CHECK(strstr(err, "bad unnamed record") != NULL);
    /* A tolerance the profiles written from it could not carry (fuzz_exact_raw found it). */
    char *tol = strdup(RAW);
    char *at = strstr(tol, "fp_tolerance\t0.01");
    CHECK(at != NULL);
    if (at) {
        memcpy(at + 13, "-.01", 4);
        CHECK(exact_raw_parse(tol, &r, err, sizeof(err)) < 0);
        CHECK(strstr(err, "bad fp_tolerance record") != NULL);
    }
    free(tol);
    /* Wasteful and approximate bytes that overlap, or bytes that sum past
     * 64 bits: each pair reads, but the profile written from them would not
     * (fuzz_exact_raw found both). */
    char *overlap = strdup(RAW);
    memcpy(strstr(overlap, "\t80\t16\t40\t40"), "\t80\t16\t80\t40", 12);
    CHECK(exact_raw_parse(overlap, &r, err, sizeof(err)) < 0);
    CHECK(strstr(err, "more wasteful bytes than bytes") != NULL);
    free(overlap);
    snprintf(fold, sizeof(RAW) + 64, "%.*sfold\t1\t1\t%s\t0\nend\n", (int)(sizeof(RAW) - 5), RAW,
             "18446744073709551600");
    CHECK(exact_raw_parse(fold, &r, err, sizeof(err)) < 0);
    CHECK(strstr(err, "past 2^64") != NULL);
    snprintf(fold, sizeof(RAW) + 64, "%.*sfold\t1\t1\t8\t9\nend\n", (int)(sizeof(RAW) - 5), RAW);
    CHECK(exact_raw_parse(fold, &r, err, sizeof(err)) < 0);
    free(fold);
    free(cut);
    free(dangling);
    free(foreign);
}

static const prof_pair *pair_with_leaf(const profile *p, const char *fn)
{
    for (size_t i = 0; i < p->npairs; i++)
        if (!strcmp(p->frames[p->contexts[p->pairs[i].watch_ctx].frames[0]].function, fn))
            return &p->pairs[i];
    return NULL;
}

TEST(convert_writes_one_profile_per_thread_with_the_element_types_approx)
{
    char dir[] = "/tmp/wasp-test-exact.XXXXXX", err[512], path[256];
    CHECK(mkdtemp(dir) != NULL);
    char *buf = strdup(RAW);
    exact_summary s = { 0 };
    CHECK(exact_convert_text(buf, dir, 0, &s, err, sizeof(err)) == 0);
    CHECK_EQ_U(s.profiles, 2);
    snprintf(path, sizeof(path), "%s/4242/4242-0.wasp", dir);
    profile p;
    CHECK(profile_read(path, &p, err, sizeof(err)) == 0);
    CHECK_STR(p.sampler, "exact");
    CHECK_EQ_U(profile_stat(&p, "samples"), 100);
    CHECK_EQ_U(profile_stat(&p, "traps"), 90);
    const prof_pair *d = pair_with_leaf(&p, "update"), *i = pair_with_leaf(&p, "kernel"),
                    *f = pair_with_leaf(&p, "single");
    CHECK(d && i && f);
    if (d && i && f) {
        CHECK_EQ_U(d->approx_bytes, 40);   /* a double store: approx64 */
        CHECK_EQ_U(i->approx_bytes, 0);    /* an integer store: never approximate */
        CHECK_EQ_U(i->wasteful_bytes, 16);
        CHECK_EQ_U(f->approx_bytes, 20);   /* a float store: approx32 */
        const prof_context *c = &p.contexts[d->watch_ctx];
        CHECK_EQ_U(c->nframes, 2);
        CHECK_STR(p.frames[c->frames[1]].function, "main");
        CHECK_EQ_U(p.frames[c->frames[1]].line, 40);
    }
    profile_free(&p);
    snprintf(path, sizeof(path), "%s/4242/4243-0.wasp", dir);
    CHECK(access(path, F_OK) == 0);
    free(buf);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

/* Pairs below 0.001% of the process's bytes fold into one, bytes kept;
 * pairs the tool could not name (past its context table) become one pair
 * that says so, bytes kept too. */
TEST(convert_folds_tiny_and_unnamed_pairs_keeping_their_bytes)
{
    static const char raw[] =
        "wasp-exact\t2\nmode\tsilent-store\npid\t77\ncut\t0\n"
        "thread\t1\t77\n"
        "leaf\t1\t0\t0x2000\tbig\tp.c\t1\t/p\t488907\t0\n"
        "leaf\t2\t0\t0x2010\ttiny\tp.c\t2\t/p\t488907\t0\n"
        "leaf\t3\t0\t0x2020\ttiny2\tp.c\t3\t/p\t488907\t0\n"
        "pair\t1\t1\t1\t1000\t10000000\t5000000\t0\t0\n"
        "pair\t1\t2\t2\t3\t50\t50\t0\t0\n"
        "pair\t1\t3\t3\t2\t40\t0\t0\t0\n"
        "fold\t1\t4\t30\t10\n"   /* pairs the tool folded itself */
        "unnamed\t1\t7\t7000\t3000\n"
        "end\n";
    char dir[] = "/tmp/wasp-test-fold.XXXXXX", err[512], path[256], cmd[300];
    CHECK(mkdtemp(dir) != NULL);
    char *buf = strdup(raw);
    exact_summary s = { 0 };
    CHECK(exact_convert_text(buf, dir, 0, &s, err, sizeof(err)) == 0);
    snprintf(path, sizeof(path), "%s/77/77-0.wasp", dir);
    profile p;
    CHECK(profile_read(path, &p, err, sizeof(err)) == 0);
    CHECK_EQ_U(p.npairs, 3);
    uint64_t bytes = 0, wasteful = 0;
    for (size_t i = 0; i < p.npairs; i++) {
        bytes += p.pairs[i].bytes;
        wasteful += p.pairs[i].wasteful_bytes;
    }
    CHECK_EQ_U(bytes, 10007120);
    CHECK_EQ_U(wasteful, 5003060);
    const prof_pair *f = pair_with_leaf(&p, "[pairs below 0.001% of bytes, folded]");
    CHECK(f != NULL);
    if (f) {
        CHECK_EQ_U(f->count, 9);
        CHECK_EQ_U(f->bytes, 120);
    }
    const prof_pair *u = pair_with_leaf(&p, "[pairs past the exact mode's context table, not named]");
    CHECK(u != NULL);
    if (u) {
        CHECK_EQ_U(u->count, 7);
        CHECK_EQ_U(u->wasteful_bytes, 3000);
    }
    CHECK(pair_with_leaf(&p, "tiny") == NULL);
    profile_free(&p);
    free(buf);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

/* Code 1 (Demo.kernel, 12 bytes at 0x7000: eight nops, mov %rax,(%rdi),
 * ret) and code 2 (Demo.other at 0x7004, newer code over part of it).
 * Leaf 1 ran in code 1, leaf 2 in code 2, leaf 3 (no code) at 0x7000,
 * leaf 4 (no code: a stub now there) at 0x700a, inside code 1. */
static const char RAW_JIT[] =
    "wasp-exact\t2\nmode\tsilent-store\npid\t99\ncontexts\t4\ncode_kept\t64\ncode_left_out\t1000\n"
    "thread\t1\t101\nthread\t2\t102\nthread\t3\t103\nthread\t4\t104\n"
    "code\t1\tDemo.kernel\t0x7000\t9090909090909090488907c3\n"
    "codeline\t1\t0\t10\tDemo.kernel\tDemo.java\n"
    "codeline\t1\t8\t40\tBump.<init>\tBump.java\n"
    "code\t2\tDemo.other\t0x7004\t4889079090c3\n"
    "leaf\t1\t0\t0x7008\tBump.<init>\tBump.java\t40\t\t488907\t1\n"
    "leaf\t2\t0\t0x7004\tDemo.other\tDemo.java\t20\t\t488907\t2\n"
    "leaf\t3\t0\t0x7000\tDemo.stub\t\t0\t\t488907\t0\n"
    "leaf\t4\t0\t0x700a\tDemo.stub\t\t0\t\t488907\t0\n"
    "pair\t1\t1\t1\t10\t80\t80\t0\t0\n"
    "pair\t2\t1\t1\t10\t80\t80\t0\t0\npair\t2\t2\t2\t10\t80\t80\t0\t0\n"
    "pair\t3\t2\t3\t10\t80\t80\t0\t0\n"
    "pair\t4\t1\t4\t10\t80\t80\t0\t0\n"
    "end\n";

TEST(raw_parses_code_and_ties_leaves_to_it)
{
    char *buf = strdup(RAW_JIT), err[256];
    exact_raw r;
    CHECK(exact_raw_parse(buf, &r, err, sizeof(err)) == 0);
    CHECK_EQ_U(r.ncodes, 3);
    CHECK_EQ_U(r.codes[1].size, 12);
    CHECK_EQ_U(r.codes[1].bytes[8], 0x48);
    CHECK_EQ_U(r.codes[1].nlines, 2);
    CHECK_STR(r.codes[1].lines[1].function, "Bump.<init>");
    CHECK_EQ_U(r.codes[2].nlines, 0);
    CHECK_EQ_U(r.leaves[1].code, 1);
    CHECK_EQ_U(r.leaves[3].code, 0);
    CHECK_EQ_U(r.code_left_out, 1000);
    exact_raw_free(&r);
    free(buf);
}

/* RAW_JIT with its first occurrence of from replaced by to: refused. */
static void check_refused(const char *from, const char *to, const char *why)
{
    char *buf = malloc(sizeof(RAW_JIT) + strlen(to)), err[256];
    const char *at = strstr(RAW_JIT, from);
    exact_raw r;
    CHECK(at != NULL);
    if (!at || !buf)
        return free(buf);
    sprintf(buf, "%.*s%s%s", (int)(at - RAW_JIT), RAW_JIT, to, at + strlen(from));
    CHECK(exact_raw_parse(buf, &r, err, sizeof(err)) < 0);
    CHECK(strstr(err, why) != NULL);
    free(buf);
}

TEST(raw_refuses_damaged_code)
{
    check_refused("0x700a\tDemo.stub\t\t0\t\t488907\t0\n", "0x700a\tDemo.stub\t\t0\t\t488907\t2\n",
                  "names no code holding its pc");
    check_refused("488907\t1\n", "488907\t7\n", "names no code holding its pc");
    check_refused("code\t2\t", "code\t3\t", "bad code record");
    check_refused("9090909090909090488907c3", "909", "bad code record");
    check_refused("9090909090909090488907c3", "90zz", "bad code bytes");
    check_refused("codeline\t1\t8\t", "codeline\t1\t0\t", "offsets must increase");
    check_refused("codeline\t1\t8\t", "codeline\t1\t12\t", "offsets must increase");
    check_refused("codeline\t1\t0\t", "codeline\t3\t0\t", "bad codeline record");
}

/* Node ids are sparse and may reach 2^32 (kept densely, never indexed by
 * id); leaf ids stay within the tool's 2^23 (a leaf past the old 2^21 is
 * taken); nodes come by rising id. */
TEST(raw_takes_sparse_node_ids_and_bounds_leaf_ids)
{
    static const char head[] = "wasp-exact\t2\nmode\tsilent-store\npid\t5\nthread\t1\t5\n";
    char buf[1024], err[256];
    exact_raw r;
    snprintf(buf, sizeof buf, "%snode\t7\t0\t0x10\tmain\tm.c\t1\t/m\n"
             "node\t4294967295\t7\t0x20\tf\tm.c\t2\t/m\n"
             "leaf\t2097153\t4294967295\t0x30\tg\tm.c\t3\t/m\t488907\t0\n"
             "pair\t1\t2097153\t2097153\t1\t8\t8\t0\t0\nend\n", head);
    CHECK(exact_raw_parse(buf, &r, err, sizeof(err)) == 0);
    CHECK_EQ_U(r.nnodes, 3);
    CHECK_EQ_U(r.leaves[2097153].node, 2);
    CHECK_EQ_U(r.nodes[2].parent, 1);
    CHECK_STR(r.nodes[r.nodes[2].parent].sym.function, "main");
    exact_raw_free(&r);
    snprintf(buf, sizeof buf, "%sleaf\t8388609\t0\t0x30\tg\tm.c\t3\t/m\t488907\t0\nend\n", head);
    CHECK(exact_raw_parse(buf, &r, err, sizeof(err)) < 0);
    snprintf(buf, sizeof buf, "%snode\t7\t0\t0x10\tmain\tm.c\t1\t/m\n"
             "node\t5\t0\t0x20\tf\tm.c\t2\t/m\nend\n", head);
    CHECK(exact_raw_parse(buf, &r, err, sizeof(err)) < 0);
    snprintf(buf, sizeof buf, "%snode\t7\t3\t0x10\tmain\tm.c\t1\t/m\nend\n", head);
    CHECK(exact_raw_parse(buf, &r, err, sizeof(err)) < 0);
    CHECK(strstr(err, "unknown node 3") != NULL);
}

static int read_thread(const char *dir, int tid, profile *p)
{
    char path[300], err[512];
    snprintf(path, sizeof(path), "%s/99/%d-0.wasp", dir, tid);
    return profile_read(path, p, err, sizeof(err));
}

TEST(convert_keeps_the_code_each_profile_ran_in)
{
    char dir[] = "/tmp/wasp-test-code.XXXXXX", err[512], cmd[300];
    CHECK(mkdtemp(dir) != NULL);
    char *buf = strdup(RAW_JIT);
    exact_summary s = { 0 };
    CHECK(exact_convert_text(buf, dir, 0, &s, err, sizeof(err)) == 0);
    profile p;
    /* Thread 1: leaf 1 in code 1, with its line table. */
    CHECK(read_thread(dir, 101, &p) == 0);
    CHECK_EQ_U(p.ncodes, 1);
    if (p.ncodes == 1) {
        CHECK_STR(p.codes[0].name, "Demo.kernel");
        CHECK_EQ_U(p.codes[0].start, 0x7000);
        CHECK_EQ_U(p.codes[0].size, 12);
        CHECK_EQ_U(p.codes[0].nlines, 2);
        CHECK_EQ_U(p.codes[0].lines[1].line, 40);
        CHECK_STR(p.codes[0].lines[1].file, "Bump.java");
    }
    CHECK_EQ_U(profile_stat(&p, "exact_code_kept"), 64);
    CHECK_EQ_U(profile_stat(&p, "exact_code_left_out"), 1000);
    CHECK_EQ_U(profile_stat(&p, "exact_contexts"), 4);
    profile_free(&p);
    /* Thread 2: leaves in both codes, which overlap: code 1 would show
     * leaf 2 inside it, code 2 overlaps code 1. Neither. */
    CHECK(read_thread(dir, 102, &p) == 0);
    CHECK_EQ_U(p.ncodes, 0);
    CHECK_EQ_U(profile_stat(&p, "exact_code_kept"), 0);
    profile_free(&p);
    /* Thread 3: code 2; leaf 3 lies outside it. */
    CHECK(read_thread(dir, 103, &p) == 0);
    CHECK_EQ_U(p.ncodes, 1);
    if (p.ncodes == 1)
        CHECK_STR(p.codes[0].name, "Demo.other");
    profile_free(&p);
    /* Thread 4: a stub's leaf now inside code 1. */
    CHECK(read_thread(dir, 104, &p) == 0);
    CHECK_EQ_U(p.ncodes, 0);
    profile_free(&p);
    free(buf);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

int main(void)
{
    RUN(raw_parses_and_decodes_leaf_instructions);
    RUN(raw_refuses_damaged_files);
    RUN(convert_writes_one_profile_per_thread_with_the_element_types_approx);
    RUN(convert_folds_tiny_and_unnamed_pairs_keeping_their_bytes);
    RUN(raw_parses_code_and_ties_leaves_to_it);
    RUN(raw_refuses_damaged_code);
    RUN(raw_takes_sparse_node_ids_and_bounds_leaf_ids);
    RUN(convert_keeps_the_code_each_profile_ran_in);
    return HARNESS_EXIT();
}

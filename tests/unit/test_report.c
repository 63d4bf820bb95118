/*
 * test_report.c - `wasp report` end to end on hand-built profiles: merging
 * of symbolically equal contexts across threads and processes, Eq. 1/2
 * fractions, pair order, --top/--pid/-o/--format, and every error exit.
 */
#include "harness.h"
#include "profile.h"
#include "report.h"
#include "report_walk.h"

#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256];
static char errtext[8192];

static const char *tmp_path(const char *name)
{
    static char buf[8][512];
    static int next;
    char *b = buf[next++ & 7];
    snprintf(b, sizeof buf[0], "%s/%s", tmpdir, name);
    return b;
}

static char *get_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Runs report_main with the given arguments (NULL-terminated), capturing
 * what it writes to stderr in errtext. */
static int run_report(const char *first, ...)
{
    char *argv[16];
    int argc = 0;
    va_list ap;
    argv[argc++] = "report";
    va_start(ap, first);
    for (const char *a = first; a && argc < 15; a = va_arg(ap, const char *))
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    fflush(stderr);
    int saved = dup(2);
    int fd = open(tmp_path("stderr.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    close(fd);
    int rc = report_main(argc, argv);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char *e = get_file(tmp_path("stderr.txt"));
    snprintf(errtext, sizeof errtext, "%s", e ? e : "");
    return rc;
}

/* ---- building profiles ---- */

/* Symbolic contexts: leaf frame (function, line, instruction) over main. */
typedef struct sym_ctx { const char *function; uint32_t line; const char *instruction; } sym_ctx;

static const sym_ctx A = { "write_round", 12, "movq %rax,(%rdx)" };
static const sym_ctx B = { "write_round", 14, "movq %rcx,(%rdx)" };
static const sym_ctx C = { "copy_loop", 40, "movb %al,(%rsi)" };
static const sym_ctx D = { "reader", 50, "movq (%rdi),%rax" };
static const sym_ctx E = { "write_round", 12, "movl %eax,(%rdx)" };  /* A but another instruction */
static const sym_ctx F = { "fill", 60, "movw %ax,(%rbx)" };
static const sym_ctx H = { "sum", 70, "movsd %xmm0,(%r8)" };

typedef struct sym_pair { const sym_ctx *watch, *trap; uint64_t count, bytes, wasteful, approx; } sym_pair;

/* Fills p's header (software sampler, 1 ms) and writes it; exits on failure. */
static const char *sampler_written = "software";   /* what write_with_header says */
static uint64_t unplaced_written;                  /* what write_profile's stats say */

static void write_with_header(profile *p, const char *path, const char *mode, int64_t pid,
                              int64_t tid)
{
    snprintf(p->mode, sizeof p->mode, "%s", mode);
    snprintf(p->sampler, sizeof p->sampler, "%s", sampler_written);
    p->pid = pid;
    p->tid = tid;
    p->thread_name = "";
    p->command = "./x";
    p->interval = 1000000;
    char err[512];
    if (profile_write(p, path, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
}

/* Writes a profile whose contexts are laid out in the order given, frames
 * placed at pc_base-dependent addresses, so equal symbols differ in pcs and
 * in table indices between threads. */
static void write_profile(const char *path, const char *mode, int64_t pid, int64_t tid,
                          uint64_t pc_base, const sym_pair *pairs, size_t npairs)
{
    prof_frame frames[32];
    prof_context ctxs[16];
    uint32_t ids[16][2];
    prof_pair out[8];
    size_t nf = 0, nc = 0;
    const sym_ctx *seen[16];
    frames[nf++] = (prof_frame){ "main", "x.c", 99, "/bin/x", pc_base + 1, "" };
    for (size_t i = 0; i < npairs; i++) {
        const sym_ctx *two[2] = { pairs[i].watch, pairs[i].trap };
        uint32_t idx[2];
        for (int k = 0; k < 2; k++) {
            size_t j = 0;
            while (j < nc && seen[j] != two[k]) j++;
            if (j == nc) {
                frames[nf] = (prof_frame){ (char *)two[k]->function, "x.c", two[k]->line,
                                           "/bin/x", pc_base + 16 * nf,
                                           (char *)two[k]->instruction };
                ids[nc][0] = (uint32_t)nf++;
                ids[nc][1] = 0;
                ctxs[nc] = (prof_context){ 2, ids[nc] };
                seen[nc++] = two[k];
            }
            idx[k] = (uint32_t)j;
        }
        out[i] = (prof_pair){ idx[0], idx[1], pairs[i].count, pairs[i].bytes,
                              pairs[i].wasteful, pairs[i].approx };
    }
    prof_stat stats[] = { { "samples", 10 }, { "traps", 5 }, { "armed", 7 },
                          { "sample_ns", 1000000 }, { "trap_ns", 500000 },
                          { "drop.not_memory", 1 }, { "drop.decode_failed", 0 },
                          { "unplaced", unplaced_written } };
    profile p = { 0 };
    p.fp_tolerance = 0.001;
    p.stats = stats; p.nstats = sizeof stats / sizeof stats[0];
    p.frames = frames; p.nframes = nf;
    p.contexts = ctxs; p.ncontexts = nc;
    p.pairs = out; p.npairs = npairs;
    write_with_header(&p, path, mode, pid, tid);
}

static const char *run_dir;

/* Run: pid 100 with threads 100 and 101, pid 200 with thread 200.
 * Totals: bytes 570, wasteful 110, approx 60. */
static void build_run(void)
{
    static const sym_pair t100[] = { { &A, &B, 5, 100, 40, 10 } };
    static const sym_pair t101[] = { { &C, &C, 1, 40, 30, 0 }, { &A, &B, 3, 60, 20, 0 } };
    static const sym_pair t200[] = { { &H, &H, 1, 20, 0, 0 }, { &E, &B, 4, 100, 0, 0 },
                                     { &F, &F, 1, 50, 10, 0 }, { &D, &A, 2, 200, 10, 50 } };
    run_dir = strdup(tmp_path("run"));
    mkdir(run_dir, 0755);
    mkdir(tmp_path("run/100"), 0755);
    mkdir(tmp_path("run/200"), 0755);
    write_profile(tmp_path("run/100/100.wasp"), "silent-store", 100, 100, 0x1000, t100, 1);
    write_profile(tmp_path("run/100/101.wasp"), "silent-store", 100, 101, 0x9000, t101, 2);
    write_profile(tmp_path("run/200/200.wasp"), "silent-store", 200, 200, 0x5000, t200, 4);
}

/* ---- reading the JSON ---- */

static double number_after(const char *doc, const char *key)
{
    const char *at = doc ? strstr(doc, key) : NULL;
    return at ? strtod(at + strlen(key), NULL) : -1;
}

static int count_of(const char *doc, const char *needle)
{
    int n = 0;
    for (const char *p = doc; p && (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

static const char *watch_of(const char *doc, const sym_ctx *c)
{
    char needle[128];
    snprintf(needle, sizeof needle, "\"watch\": {\"instruction\": \"%s\"", c->instruction);
    return strstr(doc, needle);
}

#define NEAR(a, b) (fabs((a) - (b)) < 1e-12)

TEST(merges_threads_and_processes)
{
    const char *out = tmp_path("all.json");
    CHECK_EQ_U(run_report(run_dir, "--format", "json", "-o", out, NULL), 0);
    const char *doc = get_file(out);
    CHECK(doc != NULL);
    if (!doc) return;
    CHECK(strncmp(doc, "{\"mode\": \"silent-store\"", 23) == 0);
    CHECK(strstr(doc, "\"processes\": 2, \"threads\": 3") != NULL);
    CHECK(NEAR(number_after(doc, "\"totals\": {\"fraction\": "), 110.0 / 570));
    CHECK(NEAR(number_after(doc, "\"approx_fraction\": "), 60.0 / 570));
    CHECK(strstr(doc, "\"bytes\": 570, \"wasteful_bytes\": 110") != NULL);
    /* 95% Wilson interval of 110/570 over the 17 counted pairs (values from
     * an independent computation). */
    CHECK(fabs(number_after(doc, "\"fraction_ci95\": [") - 0.070942) < 1e-5);
    {
        const char *ci = strstr(doc, "\"fraction_ci95\": [");
        const char *comma = ci ? strchr(ci, ',') : NULL;
        CHECK(comma != NULL && fabs(strtod(comma + 1, NULL) - 0.428204) < 1e-5);
    }
    CHECK(strstr(doc, "\"samples\": 30") != NULL);
    CHECK(strstr(doc, "\"traps\": 15") != NULL);
    CHECK(strstr(doc, "\"drops\": {\"decode_failed\": 0, \"not_memory\": 3}") != NULL);
    /* A->B from threads 100 and 101 (different pcs and indices) is one pair,
     * and E (A's frames and line, another instruction: an unrolled copy)
     * merges into it too, showing the instruction seen first. */
    CHECK(strstr(doc, "\"pairs_total\": 5") != NULL);
    const char *ab = watch_of(doc, &A);
    CHECK(ab != NULL && count_of(doc, "\"watch\": {\"instruction\": \"movq %rax,(%rdx)\"") == 1);
    CHECK(count_of(doc, E.instruction) == 0);
    const char *pair0 = strstr(doc, "\"pairs\": [");
    CHECK(NEAR(number_after(pair0, "{\"fraction\": "), 60.0 / 570));
    CHECK(strstr(doc, "\"bytes\": 260, \"wasteful_bytes\": 60, \"approx_bytes\": 10, \"count\": 12")
          != NULL);
    /* The leaf carries the pc of the instruction shown: the occurrence with
     * the most bytes, thread 200's A (the trap of D->A, 200 bytes), over
     * thread 100's (100 bytes) and E's (100 bytes, another instruction). */
    CHECK(strstr(doc, "\"frames\": [{\"function\": \"write_round\", \"file\": \"x.c\", \"line\": 12, "
                      "\"module\": \"/bin/x\", \"pc\": \"0x5060\"}, {\"function\": \"main\", "
                      "\"file\": \"x.c\", \"line\": 99, \"module\": \"/bin/x\"}]") != NULL);
    /* order: fraction, then approx fraction (D before F), then bytes */
    const sym_ctx *order[] = { &A, &C, &D, &F, &H };
    for (int i = 0; i + 1 < 5; i++) {
        const char *x = watch_of(doc, order[i]), *y = watch_of(doc, order[i + 1]);
        CHECK(x != NULL && y != NULL && x < y);
    }
}

TEST(top_and_pid_select)
{
    const char *out = tmp_path("top.json");
    CHECK_EQ_U(run_report("--top", "2", run_dir, "-o", out, NULL), 0);
    const char *doc = get_file(out);
    CHECK(doc && count_of(doc, "\"watch\":") == 2 && strstr(doc, "\"pairs_total\": 5"));
    CHECK_EQ_U(run_report(run_dir, "--pid=200", "--format=json", "-o", out, NULL), 0);
    doc = get_file(out);
    CHECK(doc && strstr(doc, "\"processes\": 1, \"threads\": 1"));
    CHECK(doc && strstr(doc, "\"pairs_total\": 4") && count_of(doc, "\"watch\":") == 4);
    /* fractions are relative to the selected bytes only: 20/370 */
    CHECK(NEAR(number_after(doc, "\"totals\": {\"fraction\": "), 20.0 / 370));
    CHECK_EQ_U(run_report(run_dir, "--pid", "999", "-o", out, NULL), 2);
    CHECK(strstr(errtext, "[wasp] ERROR no profiles of pid 999") != NULL);
}

TEST(accepts_pid_dir_and_single_file)
{
    const char *out = tmp_path("one.json");
    CHECK_EQ_U(run_report(tmp_path("run/100"), "-o", out, NULL), 0);
    const char *doc = get_file(out);
    CHECK(doc && strstr(doc, "\"threads\": 2") && strstr(doc, "\"pairs_total\": 2"));
    CHECK_EQ_U(run_report(tmp_path("run/200/200.wasp"), "-o", out, NULL), 0);
    doc = get_file(out);
    CHECK(doc && strstr(doc, "\"threads\": 1") && strstr(doc, "\"pairs_total\": 4"));
}

TEST(text_report)
{
    const char *out = tmp_path("report.txt");
    CHECK_EQ_U(run_report(run_dir, "-o", out, "--top", "3", NULL), 0);
    const char *doc = get_file(out);
    CHECK(doc != NULL);
    if (!doc) return;
    CHECK(strstr(doc, "wasp report: silent-store") != NULL);
    CHECK(strstr(doc, "19.30% precisely silent, 10.53% approximately silent") != NULL);
    CHECK(strstr(doc, "threads:        3 in 2 processes") != NULL);
    CHECK(strstr(doc, "handler time:   4.500 ms") != NULL);
    CHECK(strstr(doc, "drops:          not_memory 3\n") != NULL);
    CHECK(strstr(doc, "each pair times its region's accesses per") != NULL);
    CHECK(strstr(doc, "Top 3 of 5 pairs") != NULL);
    CHECK(strstr(doc, "#1   10.53%  approx   1.75%  bytes 260  count 12\n"
                      "  watch:\n"
                      "    write_round (x.c:12)    movq %rax,(%rdx)\n"
                      "    main (x.c:99)\n"
                      "  rewritten silently by (trap):\n"
                      "    write_round (x.c:14)    movq %rcx,(%rdx)\n") != NULL);
    CHECK(strstr(doc, "#3 ") != NULL && strstr(doc, "#4 ") == NULL);
    CHECK(strstr(doc, "could not place") == NULL);
}

/* Samples in code nothing names (a stripped binary without unwind tables)
 * took only the instruction at their pc: from a tenth of the samples on,
 * the report says so, in text and HTML. */
TEST(samples_wasp_could_not_place_are_called_out)
{
    static const sym_pair one[] = { { &A, &B, 5, 100, 40, 0 } };
    char *dir = strdup(tmp_path("unplaced")), *out = strdup(tmp_path("unplaced.txt"));
    mkdir(dir, 0755);
    unplaced_written = 6;   /* of 10 samples */
    write_profile(tmp_path("unplaced/1.wasp"), "silent-store", 400, 400, 0x1000, one, 1);
    unplaced_written = 0;
    CHECK_EQ_U(run_report(dir, "-o", out, NULL), 0);
    const char *doc = get_file(out);
    CHECK(doc && strstr(doc, "note: 60% of the samples landed in code wasp could not place") != NULL);
    free(out);
    out = strdup(tmp_path("unplaced.html"));
    CHECK_EQ_U(run_report(dir, "-o", out, NULL), 0);
    doc = get_file(out);
    CHECK(doc && strstr(doc, "stat('unplaced')") != NULL && strstr(doc, "\"unplaced\":6") != NULL);
    free(dir);
    free(out);
}

/* One pair found once whose survival weight makes it 90% of the bytes: the
 * report says what the fraction reads without it. Two pairs as heavy but
 * found as often as each other (a planted 50/50 case) get no such note. */
TEST(a_pair_found_once_that_decides_is_called_out)
{
    static const sym_pair heavy[] = { { &A, &B, 100, 1000, 900, 0 }, { &D, &A, 1, 9000, 0, 0 } };
    char *dir = strdup(tmp_path("heavy")), *even_dir = strdup(tmp_path("even")), *out = strdup(tmp_path("heavy.txt"));
    mkdir(dir, 0755);
    write_profile(tmp_path("heavy/1.wasp"), "silent-store", 300, 300, 0x1000, heavy, 2);
    CHECK_EQ_U(run_report(dir, "-o", out, NULL), 0);
    const char *doc = get_file(out);   /* one buffer: read each before the next */
    CHECK(doc && strstr(doc, "program:        9.00% precisely silent") != NULL);
    CHECK(doc && strstr(doc, "note: one pair (#2, found once) holds 90% of the monitored bytes;\n"
                             "        without it the program reads 90.00%.") != NULL);
    CHECK_EQ_U(run_report(dir, "--format", "json", "-o", out, NULL), 0);
    doc = get_file(out);
    CHECK(number_after(doc, "\"heaviest_pair\": {\"rank\": ") == 2);
    CHECK(doc && strstr(doc, "\"decides\": true") != NULL);
    /* The same bytes found as often as the other pair's: planted, not heavy. */
    static const sym_pair even[] = { { &A, &B, 100, 1000, 900, 0 }, { &D, &A, 100, 1000, 0, 0 } };
    mkdir(even_dir, 0755);
    mkdir(tmp_path("exact"), 0755);
    write_profile(tmp_path("even/1.wasp"), "silent-store", 301, 301, 0x1000, even, 2);
    CHECK_EQ_U(run_report(even_dir, "-o", out, NULL), 0);
    doc = get_file(out);
    CHECK(doc && strstr(doc, "program:        45.00%") != NULL && strstr(doc, "note: one pair") == NULL);
    /* The exact mode's pairs weigh nothing: a wide access's many bytes are its own. */
    sampler_written = "exact";
    write_profile(tmp_path("exact/1.wasp"), "silent-store", 302, 302, 0x1000, heavy, 2);
    sampler_written = "software";
    CHECK_EQ_U(run_report(tmp_path("exact"), "--format", "json", "-o", out, NULL), 0);
    doc = get_file(out);
    CHECK(doc && strstr(doc, "\"heaviest_pair\"") != NULL && strstr(doc, "\"decides\": false") != NULL);
    free(dir);
    free(even_dir);
    free(out);
}

TEST(output_is_atomic_and_format_follows_extension)
{
    const char *out = tmp_path("auto.json");
    CHECK_EQ_U(run_report(run_dir, "-o", out, NULL), 0);
    const char *doc = get_file(out);
    CHECK(doc && doc[0] == '{');
    out = tmp_path("auto.txt");
    CHECK_EQ_U(run_report(run_dir, "-o", out, NULL), 0);
    doc = get_file(out);
    CHECK(doc && strncmp(doc, "wasp report", 11) == 0);
    CHECK_EQ_U(run_report(run_dir, "-o", tmp_path("no/such/dir/x.json"), NULL), 2);
    CHECK(strstr(errtext, "[wasp] ERROR ") != NULL);
}

TEST(json_escapes_strings)
{
    static const sym_ctx W = { "we\"ird\\<name>\t\x01 \xff \xc3\xa9", 1, "mov\n" };
    static const sym_pair p[] = { { &W, &W, 1, 8, 8, 0 } };
    mkdir(tmp_path("esc"), 0755);
    write_profile(tmp_path("esc/1.wasp"), "dead-store", 1, 1, 0, p, 1);
    const char *out = tmp_path("esc.json");
    CHECK_EQ_U(run_report(tmp_path("esc"), "-o", out, NULL), 0);
    const char *doc = get_file(out);
    CHECK(doc && strstr(doc, "\"function\": \"we\\\"ird\\\\\\u003cname\\u003e\\u0009\\u0001 \\ufffd "
                             "\xc3\xa9\"") != NULL);
    CHECK(doc && strstr(doc, "\"instruction\": \"mov\\u000a\"") != NULL);
    CHECK(doc && strstr(doc, "\"approx_fraction\": 0,") != NULL);
}

TEST(error_exits)
{
    CHECK_EQ_U(run_report(tmp_path("nonexistent"), NULL), 2);
    CHECK(strstr(errtext, "[wasp] ERROR ") && strstr(errtext, "No such file or directory"));
    mkdir(tmp_path("empty"), 0755);
    CHECK_EQ_U(run_report(tmp_path("empty"), NULL), 2);
    CHECK(strstr(errtext, "[wasp] ERROR no profiles in ") && strstr(errtext, "wasp run"));
    CHECK_EQ_U(run_report(run_dir, "--bogus", NULL), 2);
    CHECK(strstr(errtext, "[wasp] ERROR unknown option '--bogus'") && strstr(errtext, "usage: "));
    CHECK_EQ_U(run_report(NULL), 2);
    CHECK(strstr(errtext, "usage: wasp report DIR") != NULL);
    CHECK_EQ_U(run_report(run_dir, "--top", "x", NULL), 2);
    CHECK_EQ_U(run_report(run_dir, "--format", "xml", NULL), 2);
    CHECK_EQ_U(run_report(run_dir, "--top", NULL), 2);
    CHECK(strstr(errtext, "--top needs a value") != NULL);
    CHECK_EQ_U(run_report(run_dir, run_dir, NULL), 2);
}

TEST(rejects_damaged_and_mixed)
{
    static const sym_pair p[] = { { &A, &B, 1, 8, 8, 0 } };
    mkdir(tmp_path("dmg"), 0755);
    mkdir(tmp_path("dmg/1"), 0755);
    write_profile(tmp_path("dmg/1/1.wasp"), "silent-store", 1, 1, 0, p, 1);
    write_profile(tmp_path("dmg/1/2.wasp"), "silent-store", 1, 2, 0, p, 1);
    FILE *f = fopen(tmp_path("dmg/1/2.wasp"), "r+b");
    fseek(f, 40, SEEK_SET);
    fputc('#', f);
    fclose(f);
    const char *out = tmp_path("dmg.json");
    CHECK_EQ_U(run_report(tmp_path("dmg"), "-o", out, NULL), 2);
    char want[600];
    snprintf(want, sizeof want, "[wasp] ERROR %s: checksum mismatch \xe2\x80\x94 move the file out "
             "of the run directory to report the rest\n", tmp_path("dmg/1/2.wasp"));
    CHECK_STR(errtext, want);
    CHECK(access(out, F_OK) != 0);
    write_profile(tmp_path("dmg/1/2.wasp"), "dead-store", 1, 2, 0, p, 1);
    CHECK_EQ_U(run_report(tmp_path("dmg"), "-o", out, NULL), 2);
    CHECK(strstr(errtext, "[wasp] ERROR mixed modes: ") && strstr(errtext, "dead-store"));
    CHECK_EQ_U(run_report(tmp_path("dmg/1/1.wasp"), "-o", out, NULL), 0);
}

/* ---- checkpoints ---- */

/* A thread's profile with no pairs: samples, and when a checkpoint (at_ms
 * not 0) the stat that says so. */
static void write_thread(const char *path, int64_t pid, int64_t tid, uint64_t samples, uint64_t at_ms)
{
    prof_stat stats[] = { { "samples", samples }, { "checkpoints", 2 },
                          { PROFILE_CHECKPOINT_STAT, at_ms } };
    profile p = { 0 };
    p.stats = stats;
    p.nstats = at_ms ? 3 : 2;
    write_with_header(&p, path, "silent-store", pid, tid);
}

static void put_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* A budgeted thread's account: its CPU time by its task clock, wasp's
 * handler time, and its start and end. */
static void write_accounted(const char *path, int64_t tid, uint64_t folded, uint64_t clock_ns,
                            uint64_t wasp_ns, uint64_t lifecycle_ns)
{
    prof_stat stats[] = { { "samples", 3 }, { "threads_folded", folded },
                          { "lifecycle_ns", lifecycle_ns }, { "budget.ppm", 20000 },
                          { "budget.cpu_ns", clock_ns / 2 }, { "budget.wasp_ns", wasp_ns },
                          { "budget.clock_ns", clock_ns } };
    profile p = { 0 };
    p.stats = stats;
    p.nstats = sizeof stats / sizeof stats[0];
    write_with_header(&p, path, "silent-store", 200, tid);
}

/* Threads that ended with no pair are one profile (tid 0) standing for
 * them all: counted as threads, their starts and ends in the overhead. */
TEST(ended_threads_profile_is_counted_and_costed)
{
    mkdir(tmp_path("ended"), 0755);
    mkdir(tmp_path("ended/200"), 0755);
    write_accounted(tmp_path("ended/200/200-0.wasp"), 200, 0, 10000000, 100000, 50000);
    write_accounted(tmp_path("ended/200/0-1.wasp"), 0, 3, 2000000, 0, 5950000);
    put_file(tmp_path("ended/200/manifest"), "wasp-manifest\t1\npid\t200\nstart\t200\n"
             "start\t201\nstart\t202\nstart\t203\nwrote\t200\nexit\n");
    const char *out = tmp_path("ended.txt");
    CHECK_EQ_U(run_report(tmp_path("ended"), "-o", out, NULL), 0);
    const char *doc = get_file(out);
    CHECK(doc && strstr(doc, "  threads:        4 in 1 process; 3 ended with no pair (counted, no file each)\n"));
    CHECK(doc && !strstr(doc, "incomplete"));
    /* (0.1 + 0.05 + 5.95 ms) of (9.9 + 2) ms; the thread alone: 0.15 of 9.9 */
    CHECK(doc && strstr(doc, "  est. overhead:  51.26% of all threads' CPU time; max 1.52%, median 1.52% of a\n"
                             "                  thread's (1 thread; "));
    CHECK(doc && strstr(doc, "  thread costs:   6.0 ms in 4 threads' starts and ends (1500.0 \xc2\xb5s a thread),\n"));
    CHECK(strstr(errtext, "missing") == NULL);
}

/* Samples a full table dropped are called out from 1% on: the contexts
 * first seen after are missing. */
TEST(samples_full_tables_dropped_are_called_out)
{
    prof_stat stats[] = { { "samples", 200 }, { "drop.table_full", 30 } };
    profile p = { 0 };
    p.stats = stats;
    p.nstats = 2;
    mkdir(tmp_path("full"), 0755);
    write_with_header(&p, tmp_path("full/1.wasp"), "silent-store", 500, 500);
    CHECK_EQ_U(run_report(tmp_path("full"), "-o", tmp_path("full.txt"), NULL), 0);
    const char *doc = get_file(tmp_path("full.txt"));
    CHECK(doc && strstr(doc, "  note: 15.0% of the samples found their thread's tables full and were dropped:\n"));
    stats[1].value = 1;
    write_with_header(&p, tmp_path("full/1.wasp"), "silent-store", 500, 500);
    CHECK_EQ_U(run_report(tmp_path("full"), "-o", tmp_path("full.txt"), NULL), 0);
    doc = get_file(tmp_path("full.txt"));
    CHECK(doc && !strstr(doc, "tables full"));
}

TEST(final_profile_supersedes_its_checkpoint)
{
    char *v[] = { strdup("d/1/10-0.checkpoint"), strdup("d/1/10-0.wasp"),
                  strdup("d/1/11-1.checkpoint"), strdup("d/1/12-2.wasp"),
                  strdup("d/2/10-0.checkpoint"), strdup("d/2/10-1.wasp") };
    report_paths ps = { .v = malloc(sizeof v), .n = 6, .cap = 6 };
    memcpy(ps.v, v, sizeof v);
    /* Only 10-0's checkpoint has its final profile beside it: 11-1 was
     * still running, and d/2's 10-0 is another process's (or another
     * life's: 10-1) thread. */
    CHECK_EQ_U(report_walk_supersede(&ps), 1);
    CHECK_EQ_U(ps.n, 5);
    CHECK_STR(ps.v[0], "d/1/10-0.wasp");
    CHECK_STR(ps.v[1], "d/1/11-1.checkpoint");
    CHECK_STR(ps.v[3], "d/2/10-0.checkpoint");
    CHECK(report_walk_is_checkpoint("d/1/11-1.checkpoint") && !report_walk_is_checkpoint("d/1/10-0.wasp"));
    report_walk_free(&ps);
}

/* pid 100, killed: thread 100 ended (final profile, and the checkpoint its
 * process died before removing), thread 101 was still running (a
 * checkpoint only; a temp file of the write the kill interrupted). */
static void build_killed_run(void)
{
    mkdir(tmp_path("ckpt"), 0755);
    mkdir(tmp_path("ckpt/100"), 0755);
    write_thread(tmp_path("ckpt/100/100-0.wasp"), 100, 100, 10, 0);
    write_thread(tmp_path("ckpt/100/100-0.checkpoint"), 100, 100, 7, 1795459000000ULL);
    write_thread(tmp_path("ckpt/100/101-1.checkpoint"), 100, 101, 5, 1795459702000ULL);
    put_file(tmp_path("ckpt/100/.101-1.checkpoint.0123456789abcdef.tmp"), "wasp-profile\t2\nmode");
    put_file(tmp_path("ckpt/100/manifest"),
             "wasp-manifest\t1\npid\t100\nstart\t100\nstart\t101\nwrote\t100\n");
}

TEST(killed_run_counts_each_thread_once)
{
    build_killed_run();
    const char *out = tmp_path("ckpt.json");
    CHECK_EQ_U(run_report(tmp_path("ckpt"), "--format", "json", "-o", out, NULL), 0);
    const char *doc = get_file(out);
    CHECK(doc && strstr(doc, "\"threads\": 2, \"duplicates\": 0, \"checkpoint_threads\": 1, "
                             "\"checkpoint_oldest_ms\": 1795459702000, \"incomplete\": null"));
    CHECK(doc && strstr(doc, "\"samples\": 15,"));   /* 10 + 5: the stale checkpoint's 7 left out */
    CHECK(doc && !strstr(doc, PROFILE_CHECKPOINT_STAT));   /* a time, not a sum */
    CHECK(strstr(errtext, "[wasp] WARN 1 of 2 threads from checkpoints: the program did not end "
                          "normally") != NULL);
    CHECK(strstr(errtext, "[wasp] INFO 1 checkpoint left out: its thread's final profile is there")
          != NULL);
    CHECK_EQ_U(run_report(tmp_path("ckpt"), "-o", tmp_path("ckpt.txt"), NULL), 0);
    doc = get_file(tmp_path("ckpt.txt"));
    CHECK(doc && strstr(doc, "  partial:        1 of 2 threads from checkpoints (the program did not end\n"));
    CHECK(doc && strstr(doc, "checkpoint, the oldest taken at 2026-11-23 18:48:22 UTC\n"));
}

TEST(damaged_checkpoint_is_left_out_with_a_warning)
{
    put_file(tmp_path("ckpt/100/102-2.checkpoint"), "wasp-profile\t2\nmode\tsilent-store\n");
    put_file(tmp_path("ckpt/100/manifest"), "wasp-manifest\t1\npid\t100\nstart\t100\n"
             "start\t101\nstart\t102\nwrote\t100\n");
    const char *out = tmp_path("ckpt2.json");
    CHECK_EQ_U(run_report(tmp_path("ckpt"), "--format", "json", "-o", out, NULL), 0);
    char want[600];
    snprintf(want, sizeof want, "[wasp] WARN %s: truncated (no end record) \xe2\x80\x94 a damaged "
             "checkpoint, left out\n", tmp_path("ckpt/100/102-2.checkpoint"));
    CHECK(strstr(errtext, want) != NULL);
    const char *doc = get_file(out);
    CHECK(doc && strstr(doc, "\"threads\": 2,"));
    CHECK(doc && strstr(doc, "\"incomplete\": \"1 of 3 threads' profiles missing"));
    /* A damaged final profile is still an error. */
    put_file(tmp_path("ckpt/100/103-3.wasp"), "wasp-profile\t2\n");
    CHECK_EQ_U(run_report(tmp_path("ckpt"), "-o", out, NULL), 2);
    CHECK(strstr(errtext, "[wasp] ERROR ") != NULL);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/wasp-test-report-XXXXXX");
    if (!mkdtemp(tmpdir)) { perror("mkdtemp"); return 1; }
    build_run();
    RUN(merges_threads_and_processes);
    RUN(top_and_pid_select);
    RUN(accepts_pid_dir_and_single_file);
    RUN(text_report);
    RUN(a_pair_found_once_that_decides_is_called_out);
    RUN(samples_wasp_could_not_place_are_called_out);
    RUN(output_is_atomic_and_format_follows_extension);
    RUN(json_escapes_strings);
    RUN(error_exits);
    RUN(rejects_damaged_and_mixed);
    RUN(ended_threads_profile_is_counted_and_costed);
    RUN(samples_full_tables_dropped_are_called_out);
    RUN(final_profile_supersedes_its_checkpoint);
    RUN(killed_run_counts_each_thread_once);
    RUN(damaged_checkpoint_is_left_out_with_a_warning);
    free((char *)run_dir);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (getenv("WASP_KEEP_TMP")) fprintf(stderr, "kept %s\n", tmpdir);
    else if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return HARNESS_EXIT();
}

/*
 * test_pprof.c - the pprof writer (out_pprof.c) and its selection in `wasp
 * report`: the file is gzip'd perftools.profiles.Profile that protobuf-c's
 * generated decoder reads back; each pair is one sample whose stack is C2
 * leaf first, the relation frame, then C1; values, labels, the string
 * table, functions, locations and mappings are interned once and
 * consistent; strings are valid UTF-8 whatever bytes a symbol holds; the
 * Eq. 1 fractions are comments; -o picks the format by
 * .pb.gz and .pprof; bad output paths give one ERROR line.
 */
#include "harness.h"
#include "json_escape.h"
#include "merge.h"
#include "out_pprof.h"
#include "profile.h"
#include "profile.pb-c.h"
#include "report.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Function pb_function;

/* ---- one thread's profile in memory, merged ---- */

typedef struct fake {
    prof_frame frames[16];
    prof_context ctxs[8];
    uint32_t ids[8][4];
    prof_pair pairs[8];
    size_t nframes, nctxs, npairs;
} fake;

static uint32_t fake_frame(fake *f, const char *fn, const char *file, uint32_t line,
                           const char *module, const char *insn)
{
    f->frames[f->nframes] = (prof_frame){ (char *)fn, (char *)file, line, (char *)module,
                                          0x1000 + 16 * f->nframes, (char *)insn };
    return (uint32_t)f->nframes++;
}

/* A context of a leaf over main (frame 0). */
static uint32_t fake_ctx(fake *f, uint32_t leaf)
{
    f->ids[f->nctxs][0] = leaf;
    f->ids[f->nctxs][1] = 0;
    f->ctxs[f->nctxs] = (prof_context){ 2, f->ids[f->nctxs] };
    return (uint32_t)f->nctxs++;
}

static void fake_pair(fake *f, uint32_t w, uint32_t t, uint64_t count, uint64_t bytes,
                      uint64_t wasteful, uint64_t approx)
{
    f->pairs[f->npairs++] = (prof_pair){ w, t, count, bytes, wasteful, approx };
}

static int fake_add(merge_model *m, const fake *f, const char *mode, int64_t tid)
{
    prof_stat stats[] = { { "samples", 100 }, { "traps", 10 }, { "armed", 50 } };
    profile p = { 0 };
    snprintf(p.mode, sizeof p.mode, "%s", mode);
    strcpy(p.sampler, "software");
    p.pid = 7;
    p.tid = tid;
    p.thread_name = p.command = "";
    p.interval = 1000000;
    p.fp_tolerance = 0.01;
    p.stats = stats; p.nstats = 3;
    p.frames = (prof_frame *)f->frames; p.nframes = f->nframes;
    p.contexts = (prof_context *)f->ctxs; p.ncontexts = f->nctxs;
    p.pairs = (prof_pair *)f->pairs; p.npairs = f->npairs;
    char err[256];
    if (merge_add(m, &p, "memory", err, sizeof err) == 0) return 0;
    fprintf(stderr, "  %s\n", err);
    return -1;
}

/* Two threads of the same program: A->B is seen by both (one merged pair,
 * 40 + 20 wasteful of 100 + 60 bytes), C->C and D->E by one. Totals:
 * bytes 300, wasteful 90, approx 15. */
static void build_two_threads(merge_model *m, const char *mode)
{
    fake f = { 0 }, g = { 0 };
    fake_frame(&f, "main", "x.c", 99, "/bin/x", "");
    uint32_t a = fake_ctx(&f, fake_frame(&f, "write_round", "x.c", 14, "/bin/x", "movq %rax,(%rdx)"));
    uint32_t b = fake_ctx(&f, fake_frame(&f, "write_round", "x.c", 12, "/bin/x", "movq %rcx,(%rdx)"));
    uint32_t c = fake_ctx(&f, fake_frame(&f, "memset", "", 0, "/lib/libc.so.6", "rep stosb"));
    fake_pair(&f, a, b, 5, 100, 40, 10);
    fake_pair(&f, c, c, 1, 40, 0, 5);
    fake_frame(&g, "main", "x.c", 99, "/bin/x", "");
    uint32_t a2 = fake_ctx(&g, fake_frame(&g, "write_round", "x.c", 14, "/bin/x", "movq %rax,(%rdx)"));
    uint32_t b2 = fake_ctx(&g, fake_frame(&g, "write_round", "x.c", 12, "/bin/x", "movq %rcx,(%rdx)"));
    uint32_t d = fake_ctx(&g, fake_frame(&g, "", "", 0, "", "movb %al,(%rsi)"));
    uint32_t e = fake_ctx(&g, fake_frame(&g, "sum", "y.c", 7, "/bin/x", "movl %eax,(%rbx)"));
    fake_pair(&g, a2, b2, 3, 60, 20, 0);
    fake_pair(&g, d, e, 2, 100, 30, 0);
    merge_init(m);
    if (fake_add(m, &f, mode, 1) == 0 && fake_add(m, &g, mode, 2) == 0) merge_finish(m);
}

/* ---- reading the file back ---- */

static unsigned char *gunzip(const unsigned char *in, size_t len, size_t *outlen)
{
    size_t cap = 1 << 16;
    unsigned char *out = malloc(cap);
    z_stream z = { 0 };
    if (!out || inflateInit2(&z, 15 + 16) != Z_OK) { free(out); return NULL; }
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)len;
    int rc;
    do {
        if (z.total_out == cap) out = realloc(out, cap *= 2);
        z.next_out = out + z.total_out;
        z.avail_out = (uInt)(cap - z.total_out);
        rc = inflate(&z, Z_NO_FLUSH);
    } while (out && rc == Z_OK);
    *outlen = z.total_out;
    inflateEnd(&z);
    if (rc != Z_STREAM_END) { free(out); return NULL; }
    return out;
}

/* Writes m as pprof into memory; the gzip'd bytes in *gz (caller frees). */
static pb_profile *write_and_read(const merge_model *m, unsigned char **gz, size_t *gzlen)
{
    char *buf = NULL;
    size_t len = 0, rawlen = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc = pprof_write_report(f, m, 1700000000123456789);
    fclose(f);
    if (rc != 0) { free(buf); return NULL; }
    unsigned char *raw = gunzip((unsigned char *)buf, len, &rawlen);
    pb_profile *p = raw ? perftools__profiles__profile__unpack(NULL, rawlen, raw) : NULL;
    free(raw);
    if (gz) { *gz = (unsigned char *)buf; *gzlen = len; }
    else free(buf);
    return p;
}

static const char *str(const pb_profile *p, int64_t i)
{
    return i >= 0 && (size_t)i < p->n_string_table ? p->string_table[i] : "(bad index)";
}

static const pb_location *location(const pb_profile *p, uint64_t id)
{
    for (size_t i = 0; i < p->n_location; i++)
        if (p->location[i]->id == id) return p->location[i];
    return NULL;
}

static const pb_function *function(const pb_profile *p, uint64_t id)
{
    for (size_t i = 0; i < p->n_function; i++)
        if (p->function[i]->id == id) return p->function[i];
    return NULL;
}

/* "name file:line" of a location, or "?" when an id dangles. */
static const char *frame_text(const pb_profile *p, uint64_t loc_id)
{
    static char buf[8][256];
    static int next;
    char *b = buf[next++ & 7];
    const pb_location *l = location(p, loc_id);
    const pb_function *fn = l && l->n_line == 1 ? function(p, l->line[0]->function_id) : NULL;
    if (!fn) return "?";
    snprintf(b, sizeof buf[0], "%s %s:%lld", str(p, fn->name), str(p, fn->filename),
             (long long)l->line[0]->line);
    return b;
}

static const pb_label *label(const pb_profile *p, const pb_sample *s, const char *key)
{
    for (size_t i = 0; i < s->n_label; i++)
        if (!strcmp(str(p, s->label[i]->key), key)) return s->label[i];
    return NULL;
}

static int has_comment(const pb_profile *p, const char *text)
{
    for (size_t i = 0; i < p->n_comment; i++)
        if (strstr(str(p, p->comment[i]), text)) return 1;
    return 0;
}

/* ---- tests ---- */

TEST(samples_are_pairs_with_both_stacks)
{
    merge_model m;
    build_two_threads(&m, "silent-store");
    pb_profile *p = write_and_read(&m, NULL, NULL);
    CHECK(p != NULL);
    if (!p) { merge_free(&m); return; }
    CHECK_EQ_U(p->n_sample_type, 2);
    CHECK_STR(str(p, p->sample_type[0]->type), "wasteful_bytes");
    CHECK_STR(str(p, p->sample_type[0]->unit), "bytes");
    CHECK_STR(str(p, p->sample_type[1]->type), "monitored_bytes");
    CHECK_STR(str(p, p->sample_type[1]->unit), "bytes");
    CHECK_STR(str(p, p->default_sample_type), "wasteful_bytes");
    CHECK_EQ_U(p->time_nanos, 1700000000123456789);
    CHECK_EQ_U(p->n_sample, 3);
    /* The merged pair A->B first (60 wasteful of 160), as the model sorts. */
    const pb_sample *s = p->sample[0];
    CHECK_EQ_U(s->n_value, 2);
    CHECK_EQ_U(s->value[0], 60);
    CHECK_EQ_U(s->value[1], 160);
    CHECK_EQ_U(s->n_location_id, 5);
    if (s->n_location_id == 5) {
        CHECK_STR(frame_text(p, s->location_id[0]), "write_round x.c:12");    /* C2 leaf */
        CHECK_STR(frame_text(p, s->location_id[1]), "main x.c:99");
        CHECK_STR(frame_text(p, s->location_id[2]), "rewritten silently by :0");
        CHECK_STR(frame_text(p, s->location_id[3]), "write_round x.c:14");    /* C1 leaf */
        CHECK_STR(frame_text(p, s->location_id[4]), "main x.c:99");
        /* Both mains are one location. */
        CHECK_EQ_U(s->location_id[1], s->location_id[4]);
    }
    const pb_label *l = label(p, s, "mode");
    CHECK(l && !strcmp(str(p, l->str), "silent-store"));
    l = label(p, s, "approx_bytes");
    CHECK(l && l->num == 10 && !strcmp(str(p, l->num_unit), "bytes"));
    l = label(p, s, "traps");
    CHECK(l && l->num == 8);
    l = label(p, s, "watch_instruction");
    CHECK(l && !strcmp(str(p, l->str), "movq %rax,(%rdx)"));
    l = label(p, s, "trap_instruction");
    CHECK(l && !strcmp(str(p, l->str), "movq %rcx,(%rdx)"));
    /* A frame without a symbol is named "?", like the collapsed stacks. */
    CHECK_STR(frame_text(p, p->sample[1]->location_id[3]), "? :0");
    CHECK_STR(frame_text(p, p->sample[1]->location_id[0]), "sum y.c:7");
    perftools__profiles__profile__free_unpacked(p, NULL);
    merge_free(&m);
}

TEST(tables_are_interned_and_consistent)
{
    merge_model m;
    build_two_threads(&m, "silent-store");
    pb_profile *p = write_and_read(&m, NULL, NULL);
    CHECK(p != NULL);
    if (!p) { merge_free(&m); return; }
    CHECK(p->n_string_table > 0 && p->string_table[0][0] == '\0');
    for (size_t i = 1; i < p->n_string_table; i++)
        for (size_t k = 0; k < i; k++) CHECK(strcmp(p->string_table[i], p->string_table[k]));
    /* main, write_round, memset, ?, sum, the relation: each once. */
    CHECK_EQ_U(p->n_function, 6);
    for (size_t i = 0; i < p->n_function; i++) {
        const pb_function *fn = p->function[i];
        CHECK_EQ_U(fn->id, i + 1);
        CHECK_STR(str(p, fn->system_name), str(p, fn->name));
        if (!strcmp(str(p, fn->name), "write_round")) {
            CHECK_STR(str(p, fn->filename), "x.c");
            CHECK_EQ_U(fn->start_line, 12);     /* the smallest line seen */
        }
        if (!strcmp(str(p, fn->name), "rewritten silently by")) {
            CHECK_STR(str(p, fn->filename), "");
            CHECK_EQ_U(fn->start_line, 0);
        }
    }
    /* main:99, write_round:12 and :14, memset, ?, sum, the relation. */
    CHECK_EQ_U(p->n_location, 7);
    for (size_t i = 0; i < p->n_location; i++) {
        const pb_location *l = p->location[i];
        CHECK_EQ_U(l->id, i + 1);
        CHECK(l->n_line == 1 && function(p, l->line[0]->function_id) != NULL);
        CHECK(l->mapping_id <= p->n_mapping);
    }
    for (size_t i = 0; i < p->n_sample; i++)
        for (size_t k = 0; k < p->sample[i]->n_location_id; k++)
            CHECK(location(p, p->sample[i]->location_id[k]) != NULL);
    /* One mapping per module, flagged as symbolized so pprof leaves it. */
    CHECK_EQ_U(p->n_mapping, 2);
    for (size_t i = 0; i < p->n_mapping; i++) {
        CHECK_EQ_U(p->mapping[i]->id, i + 1);
        CHECK(p->mapping[i]->has_functions && p->mapping[i]->has_filenames &&
              p->mapping[i]->has_line_numbers);
    }
    CHECK_STR(str(p, p->mapping[0]->filename), "/bin/x");
    CHECK_STR(str(p, p->mapping[1]->filename), "/lib/libc.so.6");
    perftools__profiles__profile__free_unpacked(p, NULL);
    merge_free(&m);
}

TEST(comments_carry_program_fractions)
{
    merge_model m;
    build_two_threads(&m, "silent-store");
    pb_profile *p = write_and_read(&m, NULL, NULL);
    CHECK(p != NULL);
    if (!p) { merge_free(&m); return; }
    CHECK(has_comment(p, "wasp silent-store: 2 threads in 1 process, sampler software"));
    /* 90 / 300 and 15 / 300 */
    CHECK(has_comment(p, "program (Eq. 1): 30.00% precisely silent, 5.00% approximately "
                         "silent (tolerance 0.01) of 300 bytes monitored"));
    CHECK(has_comment(p, "sampling error: "));
    CHECK(has_comment(p, "(95%, 11 pairs counted)"));
    CHECK(has_comment(p, "trap context, \"rewritten silently by\", watch context"));
    CHECK(!has_comment(p, "warning"));
    perftools__profiles__profile__free_unpacked(p, NULL);
    merge_free(&m);
}

TEST(relation_frame_follows_the_mode)
{
    static const char *const modes[][2] = { { "dead-store", "killed by" },
                                            { "silent-load", "reloaded silently by" } };
    for (int i = 0; i < 2; i++) {
        merge_model m;
        build_two_threads(&m, modes[i][0]);
        pb_profile *p = write_and_read(&m, NULL, NULL);
        CHECK(p != NULL && p->n_sample == 3);
        if (!p) { merge_free(&m); continue; }
        char want[64];
        snprintf(want, sizeof want, "%s :0", modes[i][1]);
        for (size_t k = 0; k < p->n_sample; k++)
            CHECK_STR(frame_text(p, p->sample[k]->location_id[2]), want);
        const pb_label *l = label(p, p->sample[0], "mode");
        CHECK(l && !strcmp(str(p, l->str), modes[i][0]));
        if (i == 0) {
            CHECK(has_comment(p, "program (Eq. 1): 30.00% dead of 300 bytes monitored"));
            l = label(p, p->sample[0], "approx_bytes");     /* never "approximately dead" */
            CHECK(l && l->num == 0);
        }
        perftools__profiles__profile__free_unpacked(p, NULL);
        merge_free(&m);
    }
}

/* Symbol names may hold any bytes; proto3 strings must be UTF-8. */
TEST(strings_are_valid_utf8)
{
    merge_model m;
    fake f = { 0 };
    fake_frame(&f, "main", "x.c", 1, "/bin/x", "");
    uint32_t c = fake_ctx(&f, fake_frame(&f, "we\xffird \xc3\xa9", "f\xc3.c", 2, "/bin/x",
                                         "movq %rax,(%rdx)"));
    fake_pair(&f, c, c, 1, 8, 8, 0);
    merge_init(&m);
    fake_add(&m, &f, "silent-store", 1);
    merge_finish(&m);
    pb_profile *p = write_and_read(&m, NULL, NULL);
    CHECK(p && p->n_sample == 1);
    if (!p) { merge_free(&m); return; }
    for (size_t i = 0; i < p->n_string_table; i++) CHECK(json_utf8_valid(p->string_table[i]));
    CHECK_STR(frame_text(p, p->sample[0]->location_id[0]),
              "we\xef\xbf\xbdird \xc3\xa9 f\xef\xbf\xbd.c:2");
    perftools__profiles__profile__free_unpacked(p, NULL);
    merge_free(&m);
}

TEST(gzip_output_is_deterministic)
{
    merge_model m;
    unsigned char *a = NULL, *b = NULL;
    size_t alen = 0, blen = 0;
    build_two_threads(&m, "silent-store");
    pb_profile *p = write_and_read(&m, &a, &alen);
    pb_profile *q = write_and_read(&m, &b, &blen);
    CHECK(p && q && alen > 18 && a[0] == 0x1f && a[1] == 0x8b);
    CHECK(alen == blen && a && b && memcmp(a, b, alen) == 0);
    if (p) perftools__profiles__profile__free_unpacked(p, NULL);
    if (q) perftools__profiles__profile__free_unpacked(q, NULL);
    free(a);
    free(b);
    merge_free(&m);
}

TEST(no_pairs_and_huge_values)
{
    merge_model m;
    fake f = { 0 };
    merge_init(&m);
    fake_add(&m, &f, "silent-store", 1);
    merge_finish(&m);
    pb_profile *p = write_and_read(&m, NULL, NULL);
    CHECK(p && p->n_sample == 0 && p->n_sample_type == 2 && p->n_location == 1);
    if (p) perftools__profiles__profile__free_unpacked(p, NULL);
    merge_free(&m);
    /* Counters near 2^64 (saturated by the merge) stay the largest int64. */
    fake_frame(&f, "main", "x.c", 1, "/bin/x", "");
    uint32_t c = fake_ctx(&f, fake_frame(&f, "big", "x.c", 2, "/bin/x", "movq %rax,(%rdx)"));
    fake_pair(&f, c, c, 1, UINT64_MAX, UINT64_MAX - 1, 0);
    merge_init(&m);
    fake_add(&m, &f, "silent-store", 1);
    merge_finish(&m);
    p = write_and_read(&m, NULL, NULL);
    CHECK(p && p->n_sample == 1);
    if (p && p->n_sample == 1) {
        CHECK_EQ_U(p->sample[0]->value[0], INT64_MAX);
        CHECK_EQ_U(p->sample[0]->value[1], INT64_MAX);
    }
    if (p) perftools__profiles__profile__free_unpacked(p, NULL);
    merge_free(&m);
}

/* ---- through `wasp report` ---- */

static char tmpdir[256];

static const char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int next;
    char *b = buf[next++ & 3];
    snprintf(b, sizeof buf[0], "%s/%s", tmpdir, name);
    return b;
}

/* Runs `wasp report` with stderr to a file; returns its status, the
 * stderr text in err. */
static int run_report(char *err, size_t errlen, int argc, char **argv)
{
    fflush(stderr);
    int saved = dup(2);
    int fd = open(tmp_path("stderr.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    close(fd);
    int rc = report_main(argc, argv);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    FILE *f = fopen(tmp_path("stderr.txt"), "r");
    size_t n = f ? fread(err, 1, errlen - 1, f) : 0;
    err[n] = '\0';
    if (f) fclose(f);
    return rc;
}

/* The profile in a pprof file, NULL when it does not decode. */
static pb_profile *read_pprof(const char *path)
{
    static unsigned char buf[1 << 16];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0, rawlen = 0;
    if (f) fclose(f);
    unsigned char *raw = n ? gunzip(buf, n, &rawlen) : NULL;
    pb_profile *p = raw ? perftools__profiles__profile__unpack(NULL, rawlen, raw) : NULL;
    free(raw);
    return p;
}

static int is_gzip(const char *path)
{
    unsigned char magic[2] = { 0 };
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(magic, 1, 2, f) : 0;
    if (f) fclose(f);
    return n == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

TEST(report_selects_pprof)
{
    fake f = { 0 };
    char err[4096], path[600];
    fake_frame(&f, "main", "x.c", 1, "/bin/x", "");
    uint32_t c = fake_ctx(&f, fake_frame(&f, "leaf", "x.c", 2, "/bin/x", "movq %rax,(%rdx)"));
    fake_pair(&f, c, c, 1, 8, 8, 0);
    profile p = { 0 };
    strcpy(p.mode, "silent-store");
    strcpy(p.sampler, "software");
    p.thread_name = p.command = "";
    p.pid = p.tid = 3;
    p.frames = f.frames; p.nframes = f.nframes;
    p.contexts = f.ctxs; p.ncontexts = f.nctxs;
    p.pairs = f.pairs; p.npairs = f.npairs;
    snprintf(path, sizeof path, "%s", tmp_path("3.wasp"));
    CHECK(profile_write(&p, path, err, sizeof err) == 0);
    static const char *const outs[][3] = { { "a.pb.gz", NULL, NULL },
                                           { "b.pprof", NULL, NULL },
                                           { "c.data", "--format", "pprof" } };
    for (int i = 0; i < 3; i++) {
        char out[600];
        snprintf(out, sizeof out, "%s", tmp_path(outs[i][0]));
        char *argv[] = { "report", path, "-o", out, (char *)outs[i][1], (char *)outs[i][2], NULL };
        CHECK_EQ_U(run_report(err, sizeof err, outs[i][1] ? 6 : 4, argv), 0);
        CHECK(is_gzip(out));
    }
    /* Its time is when the (newest) thread profile was written. */
    struct stat st;
    pb_profile *pp = read_pprof(tmp_path("a.pb.gz"));
    CHECK(pp && stat(path, &st) == 0 && pp->n_sample == 1);
    if (pp) CHECK_EQ_U(pp->time_nanos, st.st_mtim.tv_sec * 1000000000ull + st.st_mtim.tv_nsec);
    if (pp) perftools__profiles__profile__free_unpacked(pp, NULL);
    /* Unwritable output: one ERROR line, status 2, nothing left behind. */
    char out[600];
    snprintf(out, sizeof out, "%s", tmp_path("no/such/dir/x.pb.gz"));
    char *argv[] = { "report", path, "-o", out, NULL };
    CHECK_EQ_U(run_report(err, sizeof err, 4, argv), 2);
    CHECK(!strncmp(err, "[wasp] ERROR ", 13) && strchr(err, '\n') == strrchr(err, '\n'));
    char *bad[] = { "report", path, "--format", "proto", NULL };
    CHECK_EQ_U(run_report(err, sizeof err, 4, bad), 2);
    CHECK(strstr(err, "--format must be text, json, html, collapsed or pprof") != NULL);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/wasp-test-pprof-XXXXXX");
    if (!mkdtemp(tmpdir)) { perror("mkdtemp"); return 1; }
    RUN(samples_are_pairs_with_both_stacks);
    RUN(tables_are_interned_and_consistent);
    RUN(comments_carry_program_fractions);
    RUN(relation_frame_follows_the_mode);
    RUN(strings_are_valid_utf8);
    RUN(gzip_output_is_deterministic);
    RUN(no_pairs_and_huge_values);
    RUN(report_selects_pprof);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return HARNESS_EXIT();
}

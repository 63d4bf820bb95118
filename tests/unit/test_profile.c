/*
 * test_profile.c - profile_write/profile_read round trip and the reader's
 * refusal of every kind of damaged file, with the exact messages.
 */
#include "harness.h"
#include "merge.h"
#include "out_html.h"
#include "profile.h"
#include "profile_build.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static char tmpdir[256];
static char err[1024];

static const char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int next;
    char *b = buf[next++ & 3];
    snprintf(b, sizeof buf[0], "%s/%s", tmpdir, name);
    return b;
}

static void put_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) { perror(path); exit(1); }
    fwrite(data, 1, len, f);
    fclose(f);
}

static char *get_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(1); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    *len = fread(b, 1, (size_t)n, f);
    b[*len] = '\0';
    fclose(f);
    return b;
}

/* Writes body followed by a correct end line, so tests can reach the
 * record parser with hand-made content. */
static void put_with_end(const char *path, const char *body)
{
    size_t len = strlen(body), lines = 0;
    for (size_t i = 0; i < len; i++) lines += body[i] == '\n';
    char *all = malloc(len + 64);
    unsigned long crc = crc32(0L, (const Bytef *)body, (uInt)len);
    int n = snprintf(all, len + 64, "%s" "end\t%zu\t%08lx\n", body, lines, crc);
    put_file(path, all, (size_t)n);
    free(all);
}

/* The writer's temporary files must be gone after it returns. */
static int no_temp_files(void)
{
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    int clean = d != NULL;
    while (d && (e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".tmp")) clean = 0;
    if (d) closedir(d);
    return clean;
}

#define HEADER "wasp-profile\t2\nmode\tsilent-load\nsampler\tpmu\npid\t7\ntid\t8\n" \
               "thread\t\ncommand\t\ninterval\t100\nfp_tolerance\t0\nwatch_check\tfires 4/4\n"

static prof_frame frames[] = {
    { "write_round", "x.c", 12, "/bin/x", 0x7f0000001001, "movq %rax,(%rdx)" },  /* in a code */
    { "main", "dir with\ttab/x.c", 30, "", 0x400500, "" },
    { "we\\ird\nname \xc3\xa9\xe2\x9c\x93 \"q\" <b>", "", 0, "/lib/\r.so", UINT64_MAX, "vmovsd %xmm0,0x10(%r9,%r8,1)" },
};
static uint32_t c0[] = { 0, 1 }, c1[] = { 2, 1, 0 };
static prof_context contexts[] = { { 2, c0 }, { 3, c1 } };
static prof_pair pairs[] = {
    { 0, 1, 5, 4096, 1000, 24 },
    { 1, 1, UINT64_MAX, UINT64_MAX, 0, UINT64_MAX },
};
static prof_stat stats[] = {
    { "samples", 10 }, { "traps", 9 }, { "drop.not_memory", UINT64_MAX }, { "future\tstat", 0 },
};
/* Two codes, the higher one first in memory: the writer orders them. */
static uint8_t code_hi[] = { 0x48, 0x89, 0x06, 0xc3 }, code_lo[] = { 0x55, 0x00, 0xff, 0x0a, 0x09 };
static prof_code_line lines_lo[] = {
    { 0, 7, "Demo.kernel", "Demo.java" },
    { 1, 0, "in\tlined <x>", "" },
    { 4, 8, "Demo.kernel", "Demo.java" },
};
static prof_code codes[] = {
    { "Demo.hi", 0x7f0000001005, sizeof code_hi, code_hi, 0, NULL },
    { "Demo.kernel", 0x7f0000001000, sizeof code_lo, code_lo, 3, lines_lo },
};

static profile sample_profile(void)
{
    profile p = { 0 };
    strcpy(p.mode, "silent-store");
    strcpy(p.sampler, "software");
    p.pid = 4242;
    p.tid = -1;
    p.thread_name = "worker\t#1\\";
    p.command = "./prog --name \"a b\"\nsecond line";
    p.interval = 1000000;
    p.fp_tolerance = 0.1;
    p.stats = stats; p.nstats = sizeof stats / sizeof stats[0];
    p.frames = frames; p.nframes = sizeof frames / sizeof frames[0];
    p.contexts = contexts; p.ncontexts = sizeof contexts / sizeof contexts[0];
    p.pairs = pairs; p.npairs = sizeof pairs / sizeof pairs[0];
    p.codes = codes; p.ncodes = sizeof codes / sizeof codes[0];
    return p;
}

static int same_code(const prof_code *a, const prof_code *b)
{
    if (strcmp(a->name, b->name) || a->start != b->start || a->size != b->size ||
        memcmp(a->bytes, b->bytes, a->size) || a->nlines != b->nlines)
        return 0;
    for (uint32_t j = 0; j < a->nlines; j++)
        if (a->lines[j].offset != b->lines[j].offset || a->lines[j].line != b->lines[j].line ||
            strcmp(a->lines[j].function, b->lines[j].function) ||
            strcmp(a->lines[j].file, b->lines[j].file))
            return 0;
    return 1;
}

TEST(round_trip_keeps_every_field)
{
    profile w = sample_profile(), r;
    const char *path = tmp_path("rt.wasp");
    CHECK_EQ_U(profile_write(&w, path, err, sizeof err), 0);
    CHECK_EQ_U(profile_read(path, &r, err, sizeof err), 0);
    CHECK_STR(r.mode, w.mode);
    CHECK_STR(r.sampler, w.sampler);
    CHECK(r.pid == 4242 && r.tid == -1);
    CHECK_STR(r.thread_name, w.thread_name);
    CHECK_STR(r.command, w.command);
    CHECK_EQ_U(r.interval, w.interval);
    CHECK(r.fp_tolerance == 0.1);
    CHECK_EQ_U(r.nstats, w.nstats);
    for (size_t i = 0; i < r.nstats && i < w.nstats; i++) {
        CHECK_STR(r.stats[i].name, w.stats[i].name);
        CHECK_EQ_U(r.stats[i].value, w.stats[i].value);
    }
    CHECK_EQ_U(r.nframes, w.nframes);
    for (size_t i = 0; i < r.nframes && i < w.nframes; i++) {
        CHECK_STR(r.frames[i].function, w.frames[i].function);
        CHECK_STR(r.frames[i].file, w.frames[i].file);
        CHECK_EQ_U(r.frames[i].line, w.frames[i].line);
        CHECK_STR(r.frames[i].module, w.frames[i].module);
        CHECK_EQ_U(r.frames[i].pc, w.frames[i].pc);
        CHECK_STR(r.frames[i].instruction, w.frames[i].instruction);
    }
    CHECK_EQ_U(r.ncontexts, w.ncontexts);
    for (size_t i = 0; i < r.ncontexts && i < w.ncontexts; i++) {
        CHECK_EQ_U(r.contexts[i].nframes, w.contexts[i].nframes);
        for (uint32_t j = 0; j < r.contexts[i].nframes && j < w.contexts[i].nframes; j++)
            CHECK_EQ_U(r.contexts[i].frames[j], w.contexts[i].frames[j]);
    }
    CHECK_EQ_U(r.npairs, w.npairs);
    for (size_t i = 0; i < r.npairs && i < w.npairs; i++)
        CHECK(memcmp(&r.pairs[i], &w.pairs[i], sizeof r.pairs[i]) == 0);
    CHECK_EQ_U(profile_stat(&r, "traps"), 9);
    CHECK_EQ_U(profile_stat(&r, "absent"), 0);
    CHECK_EQ_U(r.ncodes, 2);
    if (r.ncodes == 2) {
        CHECK(same_code(&r.codes[0], &codes[1]));   /* by start */
        CHECK(same_code(&r.codes[1], &codes[0]));
    }
    profile_free(&r);
    CHECK(r.frames == NULL && r.nframes == 0 && r.codes == NULL && r.ncodes == 0);
}

TEST(written_file_matches_format_doc)
{
    profile w = sample_profile();
    const char *path = tmp_path("doc.wasp");
    size_t len;
    CHECK_EQ_U(profile_write(&w, path, err, sizeof err), 0);
    char *b = get_file(path, &len);
    CHECK(strncmp(b, "wasp-profile\t2\nmode\tsilent-store\nsampler\tsoftware\npid\t4242\n"
                     "tid\t-1\nthread\tworker\\t#1\\\\\n", 80) == 0);
    CHECK(strstr(b, "\nframe\t1\tmain\tdir with\\ttab/x.c\t30\t\t0x400500\t\n") != NULL);
    CHECK(strstr(b, "\t0xffffffffffffffff\t") != NULL);
    CHECK(strstr(b, "\nctx\t1\t2,1,0\n") != NULL);
    CHECK(strstr(b, "\npair\t0\t1\t5\t4096\t1000\t24\n") != NULL);
    CHECK(strstr(b, "\npair\t1\t1\t18446744073709551615\t18446744073709551615\t0\t"
                    "18446744073709551615\ncode\t0\tDemo.kernel\t0x7f0000001000\t5500ff0a09\n"
                    "codeline\t0\t0\t7\tDemo.kernel\tDemo.java\n"
                    "codeline\t0\t1\t0\tin\\tlined <x>\t\n"
                    "codeline\t0\t4\t8\tDemo.kernel\tDemo.java\n"
                    "code\t1\tDemo.hi\t0x7f0000001005\t488906c3\nend\t") != NULL);
    /* end: 10 header lines + 4 stats + 3 frames + 2 ctx + 2 pairs + 2 codes + 3 lines
     * = 26 records */
    char *end = strstr(b, "\nend\t");
    CHECK(end != NULL);
    if (end) {
        char want[64];
        size_t body = (size_t)(end - b) + 1;
        snprintf(want, sizeof want, "\nend\t26\t%08lx\n", crc32(0L, (const Bytef *)b, (uInt)body));
        CHECK_STR(end, want);
    }
    free(b);
    CHECK(no_temp_files());
}

TEST(writer_refuses_bad_references)
{
    profile w = sample_profile();
    prof_pair bad = { 0, 2, 1, 1, 0, 0 };
    w.pairs = &bad;
    w.npairs = 1;
    CHECK(profile_write(&w, tmp_path("bad.wasp"), err, sizeof err) != 0);
    CHECK(strstr(err, "pair 0") != NULL);
    CHECK(access(tmp_path("bad.wasp"), F_OK) != 0);
    CHECK(no_temp_files());
}

/* Writes w with one code replaced by c; expects a refusal naming what. */
static void expect_code_refused(prof_code c, const char *what)
{
    profile w = sample_profile();
    prof_code two[2] = { codes[0], c };
    w.codes = two;
    CHECK(profile_write(&w, tmp_path("badcode.wasp"), err, sizeof err) != 0);
    if (!strstr(err, what)) fprintf(stderr, "  message: %s\n", err);
    CHECK(strstr(err, what) != NULL);
    CHECK(access(tmp_path("badcode.wasp"), F_OK) != 0);
}

TEST(writer_refuses_bad_codes)
{
    prof_code c = codes[1];
    c.start = 0x7f0000001008;   /* into Demo.hi, [..1005, ..1009) */
    expect_code_refused(c, "codes 0 and 1 overlap");
    c.start = 0x7f0000001001;   /* Demo.hi starts inside this one */
    expect_code_refused(c, "codes 1 and 0 overlap");
    c = codes[1];
    c.size = 0;
    expect_code_refused(c, "code 1 has 0 bytes");
    c = codes[1];
    c.start = UINT64_MAX - 3;   /* 5 bytes from there wrap */
    expect_code_refused(c, "code 1 wraps");
    prof_code_line back[] = { { 2, 1, "f", "" }, { 2, 2, "f", "" } };
    c = codes[1];
    c.lines = back;
    c.nlines = 2;
    expect_code_refused(c, "code 1 line 1 at offset 2");
    back[1].offset = 5;
    expect_code_refused(c, "code 1 line 1 at offset 5");
    /* The last byte of the address space is fine; so are codes that touch. */
    profile w = sample_profile(), r;
    prof_code edge[2] = { codes[0], codes[1] };
    edge[1].start = UINT64_MAX - 4;
    edge[0].start = edge[1].start - edge[0].size;
    w.codes = edge;
    CHECK_EQ_U(profile_write(&w, tmp_path("edge.wasp"), err, sizeof err), 0);
    CHECK_EQ_U(profile_read(tmp_path("edge.wasp"), &r, err, sizeof err), 0);
    CHECK(r.ncodes == 2 && r.codes[1].start == UINT64_MAX - 4);
    profile_free(&r);
    CHECK(no_temp_files());
}

static void expect_error(const char *path, const char *suffix)
{
    profile r;
    char want[1024];
    memset(&r, 0x5a, sizeof r);
    int rc = profile_read(path, &r, err, sizeof err);
    snprintf(want, sizeof want, "%s%s", path, suffix);
    CHECK(rc == -1);
    CHECK_STR(err, want);
    CHECK(r.frames == NULL && r.nframes == 0 && r.thread_name == NULL);
}

TEST(rejects_wrong_magic_and_empty_and_garbage)
{
    const char *p = tmp_path("magic.wasp");
    put_file(p, "wasp-profil\t1\n", 14);
    expect_error(p, ": not a wasp profile");
    put_file(p, "", 0);
    expect_error(p, ": not a wasp profile");
    unsigned char junk[4096];
    srand(7);
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (unsigned char)rand();
    junk[0] = 'x';
    put_file(p, junk, sizeof junk);
    expect_error(p, ": not a wasp profile");
    put_file(p, "wasp-profile\tone\n", 17);
    expect_error(p, ": not a wasp profile");
}

TEST(rejects_other_version)
{
    const char *p = tmp_path("v2.wasp");
    put_with_end(p, "wasp-profile\t1\nmode\tsilent-store\n");
    expect_error(p, ": unsupported profile version 1 (this wasp reads 2)");
    put_with_end(p, "wasp-profile\t12345678901234\n");
    expect_error(p, ": unsupported profile version 12345678901234 (this wasp reads 2)");
}

TEST(rejects_truncated_and_flipped)
{
    profile w = sample_profile();
    const char *p = tmp_path("cut.wasp");
    size_t len;
    CHECK_EQ_U(profile_write(&w, p, err, sizeof err), 0);
    char *b = get_file(p, &len);
    put_file(p, b, len / 2);
    expect_error(p, ": truncated (no end record)");
    put_file(p, b, len - 1);    /* end line without its newline */
    expect_error(p, ": truncated (no end record)");
    put_file(p, b, 15);          /* just the magic line */
    expect_error(p, ": truncated (no end record)");
    b[len / 2] ^= 0x20;
    put_file(p, b, len);
    expect_error(p, ": checksum mismatch");
    b[len / 2] ^= 0x20;
    b[len - 3] = b[len - 3] == '0' ? '1' : '0';   /* a crc digit */
    put_file(p, b, len);
    expect_error(p, ": checksum mismatch");
    free(b);
}

TEST(rejects_bad_references_and_records)
{
    const char *p = tmp_path("ref.wasp");
    put_with_end(p, HEADER "frame\t0\tf\tx.c\t1\t\t0x1\tmov\nctx\t0\t0,1\n");
    expect_error(p, ":12: bad ctx record (refers to an undefined frame)");
    put_with_end(p, HEADER "frame\t0\tf\tx.c\t1\t\t0x1\tmov\nctx\t0\t0\npair\t0\t1\t1\t8\t8\t0\n");
    expect_error(p, ":13: bad pair record (refers to an undefined context)");
    put_with_end(p, HEADER "frame\t1\tf\tx.c\t1\t\t0x1\tmov\n");
    expect_error(p, ":11: bad frame record (ids must count 0,1,2...)");
    put_with_end(p, HEADER "frame\t0\tf\tx.c\t1\t\t0x1\tmov\nctx\t0\t\n");
    expect_error(p, ":12: bad ctx record (frame id not an integer)");
    put_with_end(p, HEADER "frame\t0\tf\tx.c\t1\t\t0x1\tmov\nctx\t0\t0\npair\t0\t0\t1\t8\t9\t0\n");
    expect_error(p, ":13: bad pair record (more wasteful bytes than bytes)");
    put_with_end(p, HEADER "frame\t0\tf\tx.c\t1\t\t1\tmov\n");
    expect_error(p, ":11: bad frame record (pc not 0x-hex)");
    put_with_end(p, HEADER "frame\t0\tf\\q\tx.c\t1\t\t0x1\tmov\n");
    expect_error(p, ":11: bad frame record (bad escape in function)");
    put_with_end(p, HEADER "ctx\t0\t0\nstat\tx\t1\n");
    expect_error(p, ":11: bad ctx record (refers to an undefined frame)");
    put_with_end(p, HEADER "stat\tx\t1\t2\n");
    expect_error(p, ":11: bad stat record (expected 3 fields)");
    put_with_end(p, HEADER "pair\t0\t0\t1\t1\t1\t0\nstat\tx\t1\n");
    expect_error(p, ":11: bad pair record (refers to an undefined context)");
    put_with_end(p, HEADER "stat\tx\t1\nframe\t0\tf\tx.c\t1\t\t0x1\tmov\nstat\ty\t1\n");
    expect_error(p, ":13: bad stat record (out of order)");
    put_with_end(p, HEADER "bogus\t1\n");
    expect_error(p, ":11: bad bogus record (unknown kind)");
    put_with_end(p, "wasp-profile\t2\nmode\tfast-store\n");
    expect_error(p, ":2: bad mode record (unknown value)");
    put_with_end(p, "wasp-profile\t2\nsampler\tpmu\n");
    expect_error(p, ":2: bad sampler record (expected mode)");
    put_with_end(p, "wasp-profile\t2\nmode\tdead-store\n");
    expect_error(p, ":3: bad end record (no sampler record before it)");
    put_with_end(p, HEADER "stat\tx\t99999999999999999999\n");
    expect_error(p, ":11: bad stat record (value not an integer)");
    /* a profile without codes is fine, so is one with codes and nothing else */
    profile r;
    put_with_end(p, HEADER "code\t0\tm\t0x10\t00\ncodeline\t0\t0\t3\tm\tM.java\n");
    CHECK_EQ_U(profile_read(p, &r, err, sizeof err), 0);
    CHECK(r.ncodes == 1 && r.codes[0].size == 1 && r.codes[0].nlines == 1);
    profile_free(&r);
    /* a correct checksum over a wrong record count */
    const char *body = HEADER;
    char buf[512];
    snprintf(buf, sizeof buf, "%send\t3\t%08lx\n", body,
             crc32(0L, (const Bytef *)body, (uInt)strlen(body)));
    put_file(p, buf, strlen(buf));
    expect_error(p, ":11: bad end record (counts 3 records, file has 10)");
    /* a minimal valid file still reads */
    put_with_end(p, HEADER);
    CHECK_EQ_U(profile_read(p, &r, err, sizeof err), 0);
    CHECK_STR(r.mode, "silent-load");
    profile_free(&r);
}

TEST(rejects_bad_codes)
{
    const char *p = tmp_path("code.wasp");
    static const struct { const char *body, *err; } cases[] = {
        { "code\t1\tm\t0x10\t00\n", ":11: bad code record (ids must count 0,1,2...)" },
        { "code\t0\tm\t16\t00\n", ":11: bad code record (start not 0x-hex)" },
        { "code\t0\tm\t0x10\t\n", ":11: bad code record (bytes not 1 to 4 MiB of hex)" },
        { "code\t0\tm\t0x10\t123\n", ":11: bad code record (bytes not 1 to 4 MiB of hex)" },
        { "code\t0\tm\t0x10\t0A\n", ":11: bad code record (bytes not lower-case hex)" },
        { "code\t0\tm\t0x10\t0g\n", ":11: bad code record (bytes not lower-case hex)" },
        { "code\t0\tm\t0x10\t 0\n", ":11: bad code record (bytes not lower-case hex)" },
        { "code\t0\tm\\x\t0x10\t00\n", ":11: bad code record (bad escape in name)" },
        { "code\t0\tm\t0x10\t00\t\n", ":11: bad code record (expected 5 fields)" },
        { "code\t0\tm\t0xfffffffffffffffe\t000000\n",
          ":11: bad code record (wraps past the top of memory)" },
        { "code\t0\tm\t0x10\t0000\ncode\t1\tn\t0x11\t00\n",
          ":12: bad code record (overlaps or precedes the code before it)" },
        { "code\t0\tm\t0x10\t0000\ncode\t1\tn\t0x8\t00\n",
          ":12: bad code record (overlaps or precedes the code before it)" },
        { "code\t0\tm\t0x10\t00\ncodeline\t1\t0\t1\tf\tF\n",
          ":12: bad codeline record (refers to an undefined code)" },
        { "codeline\t0\t0\t1\tf\tF\n", ":11: bad codeline record (refers to an undefined code)" },
        { "code\t0\tm\t0x10\t0000\ncodeline\t0\t2\t1\tf\tF\n",
          ":12: bad codeline record (offset beyond the code)" },
        { "code\t0\tm\t0x10\t0000\ncodeline\t0\t1\t1\tf\tF\ncodeline\t0\t1\t2\tf\tF\n",
          ":13: bad codeline record (offsets must increase)" },
        { "code\t0\tm\t0x10\t0000\ncodeline\t0\t-1\t1\tf\tF\n",
          ":12: bad codeline record (not an integer)" },
        { "code\t0\tm\t0x10\t0000\ncodeline\t0\t0\t1\tf\\\tF\n",
          ":12: bad codeline record (bad escape in function)" },
        { "code\t0\tm\t0x10\t0000\ncodeline\t0\t0\t1\tf\n",
          ":12: bad codeline record (expected 6 fields)" },
        { "code\t0\tm\t0x10\t00\npair\t0\t0\t1\t1\t1\t0\n", ":12: bad pair record (out of order)" },
    };
    char body[512];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(body, sizeof body, HEADER "%s", cases[i].body);
        put_with_end(p, body);
        expect_error(p, cases[i].err);
    }
    /* codelines of an earlier code may follow a later code */
    profile r;
    put_with_end(p, HEADER "code\t0\tm\t0x10\t0000\ncode\t1\tn\t0x12\t00\n"
                        "codeline\t0\t1\t5\tf\tF\ncodeline\t1\t0\t6\tg\tG\n");
    CHECK_EQ_U(profile_read(p, &r, err, sizeof err), 0);
    CHECK(r.ncodes == 2 && r.codes[0].nlines == 1 && r.codes[1].nlines == 1);
    if (r.ncodes == 2 && r.codes[0].nlines == 1) CHECK_STR(r.codes[0].lines[0].file, "F");
    profile_free(&r);
    /* a code of the largest size reads back, with lines up to its last
     * byte (one every 64 KiB: a line at every byte made this test 90% of
     * the unit suite's time, and proves nothing more) */
    enum { LINE_STEP = 1 << 16, NLINES = PROFILE_CODE_MAX_SIZE / LINE_STEP + 1 };
    profile w = sample_profile();
    prof_code big = { "big", 0x1000, PROFILE_CODE_MAX_SIZE, calloc(PROFILE_CODE_MAX_SIZE, 1),
                      NLINES, calloc(NLINES, sizeof(prof_code_line)) };
    for (uint32_t j = 0; big.lines && j < NLINES; j++)
        big.lines[j].offset = j + 1 < NLINES ? j * LINE_STEP : PROFILE_CODE_MAX_SIZE - 1;
    w.codes = &big;
    w.ncodes = 1;
    CHECK_EQ_U(profile_write(&w, p, err, sizeof err), 0);
    CHECK_EQ_U(profile_read(p, &r, err, sizeof err), 0);
    CHECK(r.ncodes == 1 && r.codes[0].size == PROFILE_CODE_MAX_SIZE && r.codes[0].nlines == NLINES &&
          r.codes[0].lines[NLINES - 1].offset == PROFILE_CODE_MAX_SIZE - 1);
    profile_free(&r);
    big.size++;
    CHECK(profile_write(&w, p, err, sizeof err) != 0);
    free(big.bytes);
    free(big.lines);
}

TEST(rejects_missing_file_and_directory)
{
    char want[600];
    profile r;
    const char *p = tmp_path("absent.wasp");
    CHECK(profile_read(p, &r, err, sizeof err) == -1);
    snprintf(want, sizeof want, "%s: No such file or directory", p);
    CHECK_STR(err, want);
    CHECK(profile_read(tmpdir, &r, err, sizeof err) == -1);
    CHECK(strstr(err, "not a regular file") != NULL);
    profile_free(&r);
    profile zero = { 0 };
    profile_free(&zero);
}

/* A profile the reader accepted must merge and render too (codes included:
 * frames whose pcs lie in them, odd line tables). */
static void render_read(const profile *r)
{
    merge_model m;
    char *buf = NULL;
    size_t len;
    merge_init(&m);
    if (merge_add(&m, r, "fuzz", err, sizeof err) == 0) {
        merge_finish(&m);
        FILE *f = open_memstream(&buf, &len);
        CHECK(f && html_write_report(f, &m, 0) == 0);
        if (f) fclose(f);
        free(buf);
    }
    merge_free(&m);
}

/* Mutates a valid profile and re-seals it with a correct end line, so the
 * damage reaches the record parser: it must never crash, and must either
 * succeed (and then merge and render) or name the file in its message. */
TEST(fuzz_resealed_mutations)
{
    profile w = sample_profile();
    const char *p = tmp_path("fuzz.wasp");
    size_t len;
    CHECK_EQ_U(profile_write(&w, p, err, sizeof err), 0);
    char *orig = get_file(p, &len);
    char *end = strstr(orig, "\nend\t");
    size_t body = (size_t)(end - orig) + 1;
    char *m = malloc(body + 2);
    int ok = 0, bad = 0;
    srand(12345);
    for (int iter = 0; iter < 3000; iter++) {
        memcpy(m, orig, body);
        size_t n = body;
        for (int k = 0, edits = 1 + rand() % 4; k < edits && n > 16; k++) {
            size_t at = 15 + (size_t)rand() % (n - 15);
            switch (rand() % 4) {
            case 0: m[at] ^= (char)(1 << (rand() % 8)); break;
            case 1: m[at] = "\t\n\\,0x9-"[rand() % 8]; break;
            case 2: memmove(m + at, m + at + 1, n - at - 1); n--; break;
            default: n = at; break;
            }
        }
        m[n] = '\0';
        if (n == 0 || m[n - 1] != '\n') { m[n++] = '\n'; m[n] = '\0'; }
        if (memchr(m, '\0', n)) continue;   /* put_with_end takes a C string */
        put_with_end(p, m);
        profile r;
        err[0] = '\0';
        if (profile_read(p, &r, err, sizeof err) == 0) {
            ok++;
            render_read(&r);
            profile_free(&r);
        } else {
            bad++;
            CHECK(strncmp(err, p, strlen(p)) == 0);
        }
    }
    CHECK(bad > 1000);
    CHECK(ok > 100);
    free(m);
    free(orig);
}

/* A checkpoint and the final profile of a thread name the same life
 * (<tid>-<n>); an exec'd image numbers after every file already there,
 * checkpoints included. */
TEST(checkpoint_and_final_names)
{
    char name[128];
    CHECK(profile_build_name(name, sizeof name, "d/7", 42, 3, 0) == 0);
    CHECK_STR(name, "d/7/42-3.wasp");
    CHECK(profile_build_name(name, sizeof name, "d/7", 42, 3, 1) == 0);
    CHECK_STR(name, "d/7/42-3" PROFILE_CHECKPOINT_SUFFIX);
    CHECK(profile_build_name(name, 10, "d/7", 42, 3, 1) < 0);   /* too long: refused, not cut */
    char dir[600];
    snprintf(dir, sizeof dir, "%s", tmp_path("numbers"));
    mkdir(dir, 0700);
    put_file(tmp_path("numbers/10-2.wasp"), "x", 1);
    put_file(tmp_path("numbers/11-6.checkpoint"), "x", 1);
    put_file(tmp_path("numbers/.12-9.checkpoint.0123.tmp"), "x", 1);
    put_file(tmp_path("numbers/manifest"), "x", 1);
    profile_build_number_from(dir);
    CHECK_EQ_U(profile_build_next_seq(), 7);
    CHECK_EQ_U(profile_build_next_seq(), 8);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/wasp-test-profile-XXXXXX");
    if (!mkdtemp(tmpdir)) { perror("mkdtemp"); return 1; }
    RUN(round_trip_keeps_every_field);
    RUN(written_file_matches_format_doc);
    RUN(writer_refuses_bad_references);
    RUN(writer_refuses_bad_codes);
    RUN(rejects_wrong_magic_and_empty_and_garbage);
    RUN(rejects_other_version);
    RUN(rejects_truncated_and_flipped);
    RUN(rejects_bad_references_and_records);
    RUN(rejects_bad_codes);
    RUN(rejects_missing_file_and_directory);
    RUN(fuzz_resealed_mutations);
    RUN(checkpoint_and_final_names);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (getenv("WASP_KEEP_TMP")) fprintf(stderr, "kept %s\n", tmpdir);
    else if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return HARNESS_EXIT();
}

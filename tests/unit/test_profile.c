/*
 * test_profile.c - profile_write/profile_read round trip and the reader's
 * refusal of every kind of damaged file, with the exact messages.
 */
#include "harness.h"
#include "profile.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
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

#define HEADER "wasp-profile\t1\nmode\tsilent-load\nsampler\tpmu\npid\t7\ntid\t8\n" \
               "thread\t\ncommand\t\ninterval\t100\nfp_tolerance\t0\n"

static prof_frame frames[] = {
    { "write_round", "x.c", 12, "/bin/x", 0x401000, "movq %rax,(%rdx)" },
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
    return p;
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
    profile_free(&r);
    CHECK(r.frames == NULL && r.nframes == 0);
}

TEST(written_file_matches_format_doc)
{
    profile w = sample_profile();
    const char *path = tmp_path("doc.wasp");
    size_t len;
    CHECK_EQ_U(profile_write(&w, path, err, sizeof err), 0);
    char *b = get_file(path, &len);
    CHECK(strncmp(b, "wasp-profile\t1\nmode\tsilent-store\nsampler\tsoftware\npid\t4242\n"
                     "tid\t-1\nthread\tworker\\t#1\\\\\n", 80) == 0);
    CHECK(strstr(b, "\nframe\t1\tmain\tdir with\\ttab/x.c\t30\t\t0x400500\t\n") != NULL);
    CHECK(strstr(b, "\t0xffffffffffffffff\t") != NULL);
    CHECK(strstr(b, "\nctx\t1\t2,1,0\n") != NULL);
    CHECK(strstr(b, "\npair\t0\t1\t5\t4096\t1000\t24\n") != NULL);
    /* end: 9 header lines + 4 stats + 3 frames + 2 ctx + 2 pairs = 20 records */
    char *end = strstr(b, "\nend\t");
    CHECK(end != NULL);
    if (end) {
        char want[64];
        size_t body = (size_t)(end - b) + 1;
        snprintf(want, sizeof want, "\nend\t20\t%08lx\n", crc32(0L, (const Bytef *)b, (uInt)body));
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
    put_with_end(p, "wasp-profile\t2\nmode\tsilent-store\n");
    expect_error(p, ": unsupported profile version 2 (this wasp reads 1)");
    put_with_end(p, "wasp-profile\t12345678901234\n");
    expect_error(p, ": unsupported profile version 12345678901234 (this wasp reads 1)");
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
    expect_error(p, ":11: bad ctx record (refers to an undefined frame)");
    put_with_end(p, HEADER "frame\t0\tf\tx.c\t1\t\t0x1\tmov\nctx\t0\t0\npair\t0\t1\t1\t8\t8\t0\n");
    expect_error(p, ":12: bad pair record (refers to an undefined context)");
    put_with_end(p, HEADER "frame\t1\tf\tx.c\t1\t\t0x1\tmov\n");
    expect_error(p, ":10: bad frame record (ids must count 0,1,2...)");
    put_with_end(p, HEADER "frame\t0\tf\tx.c\t1\t\t0x1\tmov\nctx\t0\t\n");
    expect_error(p, ":11: bad ctx record (frame id not an integer)");
    put_with_end(p, HEADER "frame\t0\tf\tx.c\t1\t\t0x1\tmov\nctx\t0\t0\npair\t0\t0\t1\t8\t9\t0\n");
    expect_error(p, ":12: bad pair record (more wasteful bytes than bytes)");
    put_with_end(p, HEADER "frame\t0\tf\tx.c\t1\t\t1\tmov\n");
    expect_error(p, ":10: bad frame record (pc not 0x-hex)");
    put_with_end(p, HEADER "frame\t0\tf\\q\tx.c\t1\t\t0x1\tmov\n");
    expect_error(p, ":10: bad frame record (bad escape in function)");
    put_with_end(p, HEADER "ctx\t0\t0\nstat\tx\t1\n");
    expect_error(p, ":10: bad ctx record (refers to an undefined frame)");
    put_with_end(p, HEADER "stat\tx\t1\t2\n");
    expect_error(p, ":10: bad stat record (expected 3 fields)");
    put_with_end(p, HEADER "pair\t0\t0\t1\t1\t1\t0\nstat\tx\t1\n");
    expect_error(p, ":10: bad pair record (refers to an undefined context)");
    put_with_end(p, HEADER "stat\tx\t1\nframe\t0\tf\tx.c\t1\t\t0x1\tmov\nstat\ty\t1\n");
    expect_error(p, ":12: bad stat record (out of order)");
    put_with_end(p, HEADER "bogus\t1\n");
    expect_error(p, ":10: bad bogus record (unknown kind)");
    put_with_end(p, "wasp-profile\t1\nmode\tfast-store\n");
    expect_error(p, ":2: bad mode record (unknown value)");
    put_with_end(p, "wasp-profile\t1\nsampler\tpmu\n");
    expect_error(p, ":2: bad sampler record (expected mode)");
    put_with_end(p, "wasp-profile\t1\nmode\tdead-store\n");
    expect_error(p, ":3: bad end record (no sampler record before it)");
    put_with_end(p, HEADER "stat\tx\t99999999999999999999\n");
    expect_error(p, ":10: bad stat record (value not an integer)");
    /* a correct checksum over a wrong record count */
    const char *body = HEADER;
    char buf[512];
    snprintf(buf, sizeof buf, "%send\t3\t%08lx\n", body,
             crc32(0L, (const Bytef *)body, (uInt)strlen(body)));
    put_file(p, buf, strlen(buf));
    expect_error(p, ":10: bad end record (counts 3 records, file has 9)");
    /* a minimal valid file still reads */
    profile r;
    put_with_end(p, HEADER);
    CHECK_EQ_U(profile_read(p, &r, err, sizeof err), 0);
    CHECK_STR(r.mode, "silent-load");
    profile_free(&r);
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

/* Mutates a valid profile and re-seals it with a correct end line, so the
 * damage reaches the record parser: it must never crash, and must either
 * succeed or name the file in its message. */
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
            profile_free(&r);
        } else {
            bad++;
            CHECK(strncmp(err, p, strlen(p)) == 0);
        }
    }
    CHECK(bad > 1000);
    free(m);
    free(orig);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/wasp-test-profile-XXXXXX");
    if (!mkdtemp(tmpdir)) { perror("mkdtemp"); return 1; }
    RUN(round_trip_keeps_every_field);
    RUN(written_file_matches_format_doc);
    RUN(writer_refuses_bad_references);
    RUN(rejects_wrong_magic_and_empty_and_garbage);
    RUN(rejects_other_version);
    RUN(rejects_truncated_and_flipped);
    RUN(rejects_bad_references_and_records);
    RUN(rejects_missing_file_and_directory);
    RUN(fuzz_resealed_mutations);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (getenv("WASP_KEEP_TMP")) fprintf(stderr, "kept %s\n", tmpdir);
    else if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return HARNESS_EXIT();
}

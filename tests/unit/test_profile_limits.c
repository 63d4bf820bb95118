/*
 * test_profile_limits.c - the reader's bounds: what it refuses before
 * reading (FIFOs, links in a walk) and the per-file caps it names.
 */
#include "harness.h"
#include "profile.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define HEADER "wasp-profile\t2\nmode\tsilent-load\nsampler\tpmu\npid\t7\ntid\t8\n" \
               "thread\t\ncommand\t\ninterval\t100\nfp_tolerance\t0\nwatch_check\tfires 4/4\n"

static char dir[256];
static char err[1024];

/* body with a correct end record, read from memory. */
static int read_body(const char *body, profile *p)
{
    size_t len = strlen(body), lines = 0;
    for (size_t i = 0; i < len; i++) lines += body[i] == '\n';
    char *all = malloc(len + 64);
    unsigned long crc = crc32(0L, (const Bytef *)body, (uInt)len);
    int n = snprintf(all, len + 64, "%s" "end\t%zu\t%08lx\n", body, lines, crc);
    FILE *f = fmemopen(all, (size_t)n, "rb");
    int rc = profile_read_stream(f, "mem", p, err, sizeof err);
    fclose(f);
    free(all);
    return rc;
}

TEST(stream_reads_a_profile)
{
    profile p;
    CHECK_EQ_U(read_body(HEADER "stat\tsamples\t5\nframe\t0\tf\tf.c\t3\tm\t0x10\tmov\n"
                         "ctx\t0\t0\npair\t0\t0\t1\t8\t8\t0\n", &p), 0);
    CHECK_EQ_U(p.npairs, 1);
    CHECK_EQ_U(profile_stat(&p, "samples"), 5);
    CHECK(p.crc != 0 && p.records == 14);
    profile_free(&p);
}

TEST(a_context_of_too_many_frames_is_refused_before_allocating)
{
    profile p;
    size_t n = 1025;
    char *body = malloc(strlen(HEADER) + 64 + 2 * n);
    char *o = body + sprintf(body, HEADER "frame\t0\tf\t\t0\t\t0x1\t\nctx\t0\t0");
    for (size_t i = 1; i < n; i++) o += sprintf(o, ",0");
    strcpy(o, "\n");
    CHECK(read_body(body, &p) != 0);
    CHECK(strstr(err, "mem:12: bad ctx record (more than 1024 frames)") != NULL);
    o[-2] = '\n';    /* 1024 frames: accepted */
    o[-1] = '\0';
    CHECK_EQ_U(read_body(body, &p), 0);
    profile_free(&p);
    free(body);
}

TEST(a_line_longer_than_any_record_is_refused)
{
    profile p;
    size_t n = (size_t)9 << 20;
    char *body = malloc(strlen(HEADER) + n + 16);
    char *o = body + sprintf(body, HEADER "stat\t");
    memset(o, 'a', n);
    strcpy(o + n, "\t1\n");
    CHECK(read_body(body, &p) != 0);
    CHECK(strstr(err, "mem: line 11 is longer than 8454144 bytes") != NULL);
    free(body);
}

TEST(a_fifo_is_refused_without_blocking)
{
    profile p;
    char path[300];
    snprintf(path, sizeof path, "%s/fifo.wasp", dir);
    CHECK(mkfifo(path, 0600) == 0);
    CHECK(profile_read(path, &p, err, sizeof err) != 0);   /* would block forever if opened blocking */
    CHECK(strstr(err, "not a regular file") != NULL);
    unlink(path);
}

TEST(a_link_in_a_walk_is_not_followed)
{
    profile p;
    char path[300];
    snprintf(path, sizeof path, "%s/link.wasp", dir);
    CHECK(symlink("/etc/passwd", path) == 0);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    CHECK(profile_read_at(dfd, "link.wasp", path, &p, err, sizeof err) != 0);
    CHECK(strstr(err, "a symbolic link (not followed)") != NULL);
    close(dfd);
    unlink(path);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/wasp-test-limits-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    RUN(stream_reads_a_profile);
    RUN(a_context_of_too_many_frames_is_refused_before_allocating);
    RUN(a_line_longer_than_any_record_is_refused);
    RUN(a_fifo_is_refused_without_blocking);
    RUN(a_link_in_a_walk_is_not_followed);
    rmdir(dir);
    return HARNESS_EXIT();
}

/*
 * test_completeness.c - manifests against the profiles found, and the
 * printable test of the text outputs.
 */
#include "harness.h"
#include "completeness.h"
#include "text_escape.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];
static char err[512], msg[512];

/* Writes text as DIR/<pid>/manifest and reads it into c. */
static int read_manifest(completeness *c, const char *pid, const char *text)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, pid);
    mkdir(path, 0700);
    int dfd = open(path, O_RDONLY | O_DIRECTORY);
    snprintf(path, sizeof path, "%s/%s/manifest", dir, pid);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    int rc = completeness_read(c, dfd, "manifest", path, err, sizeof err);
    close(dfd);
    return rc;
}

TEST(complete_run_says_nothing)
{
    completeness c = { 0 };
    CHECK_EQ_U(read_manifest(&c, "10", "wasp-manifest\t1\npid\t10\nstart\t10\nstart\t11\n"
                             "wrote\t11\nwrote\t10\nexit\n"), 0);
    completeness_found(&c, 10, 1);
    completeness_found(&c, 10, 1);
    CHECK_EQ_U(completeness_missing(&c, -1, msg, sizeof msg), 0);
    completeness_free(&c);
}

TEST(killed_process_is_named)
{
    completeness c = { 0 };
    /* The last record was cut by the kill: ignored, not an error. */
    CHECK_EQ_U(read_manifest(&c, "20", "wasp-manifest\t1\npid\t20\nstart\t20\nstart\t21\n"
                             "start\t22\nwrote\t21\nsta"), 0);
    completeness_found(&c, 20, 1);
    CHECK_EQ_U(completeness_missing(&c, -1, msg, sizeof msg), 2);
    CHECK_STR(msg, "2 of 3 threads' profiles missing (2: process 20 was killed (or exec'd) "
                   "before it wrote them)");
    completeness_free(&c);
}

TEST(reasons_are_counted_and_copies_once)
{
    completeness c = { 0 };
    const char *m = "wasp-manifest\t1\npid\t30\nstart\t30\nstart\t31\nlost\t31\tdisk_full\n"
                    "start\t32\nlost\t32\tdescriptor_budget\nwrote\t30\nexit\n";
    CHECK_EQ_U(read_manifest(&c, "30", m), 0);
    CHECK_EQ_U(read_manifest(&c, "copy", m), 0);     /* cp -r of the pid directory */
    completeness_found(&c, 30, 1);
    CHECK_EQ_U(completeness_missing(&c, -1, msg, sizeof msg), 2);
    CHECK_STR(msg, "2 of 3 threads' profiles missing (1: the disk was full, 1: over the "
                   "descriptor budget: raise `ulimit -n`)");
    CHECK_EQ_U(completeness_missing(&c, 99, msg, sizeof msg), 0);   /* --pid 99 */
    completeness_free(&c);
}

/* A process that sandboxed itself wrote its profiles then ("exit"), and
 * its run is complete; the record says where they end. */
TEST(sandboxed_process_is_counted)
{
    completeness c = { 0 };
    CHECK_EQ_U(read_manifest(&c, "50", "wasp-manifest\t1\npid\t50\nstart\t50\nwrote\t50\nexit\n"
                             "sandboxed\n"), 0);
    completeness_found(&c, 50, 1);
    CHECK_EQ_U(completeness_missing(&c, -1, msg, sizeof msg), 0);
    CHECK_EQ_U(completeness_sandboxed(&c), 1);
    CHECK_EQ_U(completeness_ended(&c), 0);
    CHECK(read_manifest(&c, "51", "wasp-manifest\t1\npid\t51\nsandboxed\tx\n") != 0);
    completeness_free(&c);
}

/* Threads that ended with no pair have no file of their own: the ended
 * threads' profile stands for them, as many as it folded. Its checkpoint,
 * taken before the last of them ended, leaves those missing. */
TEST(ended_threads_profile_counts_its_threads)
{
    completeness c = { 0 };
    CHECK_EQ_U(read_manifest(&c, "60", "wasp-manifest\t1\npid\t60\nstart\t60\nstart\t61\n"
                             "start\t62\nstart\t63\nwrote\t60\nexit\n"), 0);
    completeness_found(&c, 60, 1);
    completeness_found(&c, 60, 3);
    CHECK_EQ_U(completeness_missing(&c, -1, msg, sizeof msg), 0);
    completeness_free(&c);
    CHECK_EQ_U(read_manifest(&c, "70", "wasp-manifest\t1\npid\t70\nstart\t70\nstart\t71\n"
                             "start\t72\n"), 0);
    completeness_found(&c, 70, 1);
    completeness_found(&c, 70, 1);
    CHECK_EQ_U(completeness_missing(&c, -1, msg, sizeof msg), 1);
    CHECK_STR(msg, "1 of 3 threads' profiles missing (1: process 70 was killed (or exec'd) "
                   "before it wrote them)");
    completeness_free(&c);
}

TEST(damaged_manifests_are_refused)
{
    completeness c = { 0 };
    CHECK(read_manifest(&c, "40", "not a manifest\n") != 0);
    CHECK(read_manifest(&c, "41", "wasp-manifest\t1\npid\t41\nstart\tx\n") != 0);
    CHECK(strstr(err, "damaged manifest") != NULL);
    CHECK_EQ_U(read_manifest(&c, "42", ""), 0);      /* made on a full disk: pid from the name */
    CHECK_EQ_U(completeness_processes(&c), 1);
    completeness_free(&c);
}

TEST(printable_is_utf8_without_controls)
{
    CHECK_EQ_U(text_printable_len((const unsigned char *)"a"), 1);
    CHECK_EQ_U(text_printable_len((const unsigned char *)"\xc3\xa9"), 2);        /* é */
    CHECK_EQ_U(text_printable_len((const unsigned char *)"\xe2\x82\xac"), 3);    /* € */
    CHECK_EQ_U(text_printable_len((const unsigned char *)"\x1b["), 0);           /* ESC */
    CHECK_EQ_U(text_printable_len((const unsigned char *)"\x7f"), 0);
    CHECK_EQ_U(text_printable_len((const unsigned char *)"\xc2\x9b"), 0);        /* CSI, C1 */
    CHECK_EQ_U(text_printable_len((const unsigned char *)"\x9b"), 0);            /* bare C1 */
    CHECK_EQ_U(text_printable_len((const unsigned char *)"\xc0\x9b"), 0);        /* overlong */
    CHECK_EQ_U(text_printable_len((const unsigned char *)"\xe2\x82"), 0);        /* cut short */
    CHECK_EQ_U(text_printable_len((const unsigned char *)"\xed\xa0\x80"), 0);    /* surrogate */
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/wasp-test-completeness-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    RUN(complete_run_says_nothing);
    RUN(killed_process_is_named);
    RUN(reasons_are_counted_and_copies_once);
    RUN(sandboxed_process_is_counted);
    RUN(ended_threads_profile_counts_its_threads);
    RUN(damaged_manifests_are_refused);
    RUN(printable_is_utf8_without_controls);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) return 1;
    return HARNESS_EXIT();
}

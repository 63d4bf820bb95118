/*
 * test_publish.c - the one publisher: fresh temp names, no link followed,
 * owner-only modes, nothing left behind.
 */
#include "harness.h"
#include "publish.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static const char *at(const char *name)
{
    static char buf[4][512];
    static int next;
    char *b = buf[next++ & 3];
    snprintf(b, sizeof buf[0], "%s/%s", dir, name);
    return b;
}

/* Entries of path but "." and "..", hidden temp files included. */
static size_t entries(const char *path)
{
    size_t n = 0;
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d) closedir(d);
    return n;
}

TEST(buffer_is_published_0600_with_no_temp_left)
{
    struct stat st;
    umask(0);
    int fd = publish_open_dir(dir);
    CHECK(fd >= 0);
    CHECK_EQ_U(publish_buffer(fd, "a.wasp", "hello\n", 6, PUBLISH_FILE_MODE), 0);
    CHECK(stat(at("a.wasp"), &st) == 0 && (st.st_mode & 0777) == 0600 && st.st_size == 6);
    CHECK_EQ_U(publish_buffer(fd, "a.wasp", "bye\n", 4, PUBLISH_FILE_MODE), 0);   /* replaced */
    CHECK(stat(at("a.wasp"), &st) == 0 && st.st_size == 4);
    CHECK_EQ_U(entries(dir), 1);
    close(fd);
    unlink(at("a.wasp"));
}

TEST(a_planted_link_is_never_written_through)
{
    FILE *f = fopen(at("victim"), "w");
    fputs("precious", f);
    fclose(f);
    CHECK(symlink(at("victim"), at("b.wasp")) == 0);
    int fd = publish_open_dir(dir);
    CHECK_EQ_U(publish_buffer(fd, "b.wasp", "new", 3, PUBLISH_FILE_MODE), 0);
    close(fd);
    struct stat st;
    CHECK(lstat(at("b.wasp"), &st) == 0 && S_ISREG(st.st_mode));   /* the link was replaced */
    CHECK(stat(at("victim"), &st) == 0 && st.st_size == 8);        /* its target untouched */
    unlink(at("b.wasp"));
    unlink(at("victim"));
}

TEST(a_linked_directory_is_refused)
{
    char name[64];
    mkdir(at("real"), 0700);
    CHECK(symlink(at("real"), at("linked")) == 0);
    errno = 0;
    CHECK(publish_open_dir(at("linked")) < 0 && (errno == ELOOP || errno == ENOTDIR));
    CHECK(publish_open_parent(at("linked/x.wasp"), 1, name, sizeof name) < 0);
    int fd = publish_open_parent(at("linked/x.wasp"), 0, name, sizeof name);  /* a report's */
    CHECK(fd >= 0);
    CHECK_STR(name, "x.wasp");
    if (fd >= 0) close(fd);
    unlink(at("linked"));
    rmdir(at("real"));
}

TEST(mkdirs_makes_0700_and_refuses_a_link_in_the_way)
{
    struct stat st;
    umask(0);
    CHECK_EQ_U(publish_mkdirs(at("p/q/r"), PUBLISH_DIR_MODE), 0);
    CHECK(stat(at("p/q/r"), &st) == 0 && (st.st_mode & 0777) == 0700);
    CHECK_EQ_U(publish_mkdirs(at("p/q/r"), PUBLISH_DIR_MODE), 0);   /* already there */
    CHECK(symlink(at("p"), at("p/q/s")) == 0);
    errno = 0;
    CHECK(publish_mkdirs(at("p/q/s"), PUBLISH_DIR_MODE) < 0 && errno == ENOTDIR);
    unlink(at("p/q/s"));
    rmdir(at("p/q/r"));
    rmdir(at("p/q"));
    rmdir(at("p"));
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/wasp-test-publish-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    RUN(buffer_is_published_0600_with_no_temp_left);
    RUN(a_planted_link_is_never_written_through);
    RUN(a_linked_directory_is_refused);
    RUN(mkdirs_makes_0700_and_refuses_a_link_in_the_way);
    rmdir(dir);
    return HARNESS_EXIT();
}

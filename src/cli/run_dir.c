/*
 * run_dir.c - the run directory. A report reads every process directory in
 * DIR as one run, so a second run into the same DIR would be reported
 * merged with the first (or refused as mixed modes after it ran for an
 * hour): wasp refuses such a DIR up front and never removes what is there.
 */
#include "run_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "publish.h"

/* What a run leaves in DIR: its processes' directories (named by pid) and
 * an exact run's raw records (.exact, left by an exact run that was cut
 * short); counted into *found. 0, or -1 when DIR cannot be read. */
static int count_earlier(int dirfd, size_t *found)
{
    int fd = dup(dirfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return -1;
    }
    struct dirent *e;
    struct stat st;
    *found = 0;
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        int is_pid = n[0] && strspn(n, "0123456789") == strlen(n);
        if ((is_pid || !strcmp(n, ".exact")) &&
            fstatat(dirfd, n, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
            (*found)++;
    }
    closedir(d);
    return 0;
}

static int refuse_earlier(int fd, const char *dir, char *err, size_t errlen)
{
    size_t earlier = 0;
    if (count_earlier(fd, &earlier) < 0) {
        snprintf(err, errlen, "cannot read %s: %s — give a directory wasp can read and write with -o DIR",
                 dir, strerror(errno));
        return -1;
    }
    if (!earlier)
        return 0;
    snprintf(err, errlen, "-o %s holds an earlier run (%zu process director%s): a report would mix "
             "the two runs — give a new -o DIR, or remove that one first (rm -r '%s')", dir, earlier,
             earlier == 1 ? "y" : "ies", dir);
    return -1;
}

int run_dir_check(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (!*dir) {
        snprintf(err, errlen, "-o needs a directory, not an empty string — give e.g. -o prof");
        return -1;
    }
    if (lstat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "-o %s is %s, not a directory — give a directory wasp may create "
                 "or fill", dir, S_ISLNK(st.st_mode) ? "a symbolic link" : "an existing file");
        return -1;
    }
    if (publish_mkdirs(dir, PUBLISH_DIR_MODE) != 0) {
        snprintf(err, errlen, "cannot create %s: %s — give a writable directory with -o DIR", dir,
                 strerror(errno));
        return -1;
    }
    int fd = publish_open_dir(dir);
    if (fd >= 0 && refuse_earlier(fd, dir, err, errlen) < 0) {
        close(fd);
        return -1;
    }
    /* access() would say yes to root on a read-only mount or /proc: try. */
    char probe[64];
    snprintf(probe, sizeof probe, ".wasp-write-check.%d", (int)getpid());
    if (fd < 0 || mkdirat(fd, probe, 0700) != 0) {
        snprintf(err, errlen, "cannot write into %s: %s — give a writable directory with -o DIR",
                 dir, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    unlinkat(fd, probe, AT_REMOVEDIR);
    close(fd);
    return 0;
}

int run_dir_default(char *dir, size_t len)
{
    struct stat st;
    int pid = (int)getpid();
    for (int n = 1; n < 10000; n++) {
        int w = n == 1 ? snprintf(dir, len, "wasp-%d", pid) : snprintf(dir, len, "wasp-%d-%d", pid, n);
        if (w < 0 || (size_t)w >= len)
            return -1;
        if (lstat(dir, &st) != 0 && errno == ENOENT)
            return 0;
    }
    return -1;
}

/*
 * publish.c - safe creation of files and directories (publish.h).
 *
 * Temporary names are random, not pid-derived: with O_EXCL a predictable
 * name would only let another user block the write, never redirect it, but
 * a random one does not even allow that. No stdio, no allocation.
 */
#include "publish.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PUBLISH_TRIES 16

/* 64 unpredictable bits; the clock when getrandom is unavailable (it
 * cannot block here: GRND_NONBLOCK). */
static unsigned long long publish_random(void)
{
    unsigned long long r;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r)
        return r;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_nsec * 0x9E3779B97F4A7C15ULL ^ (unsigned long long)getpid();
}

int publish_open(publish_tmp *t, int dirfd, const char *name, mode_t mode)
{
    t->dirfd = dirfd;
    if (snprintf(t->name, sizeof t->name, "%s", name) >= (int)sizeof t->name) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (int i = 0; i < PUBLISH_TRIES; i++) {
        snprintf(t->tmp, sizeof t->tmp, ".%s.%016llx.tmp", name, publish_random());
        int fd = openat(dirfd, t->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        mode);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

int publish_finish(publish_tmp *t, int ok)
{
    if (ok && renameat(t->dirfd, t->tmp, t->dirfd, t->name) == 0)
        return 0;
    int saved = ok ? errno : 0;
    unlinkat(t->dirfd, t->tmp, 0);
    errno = saved;
    return -1;
}

/* write(2) until done; 0, or -1 with errno set (ENOSPC, EIO...). */
static int publish_write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return -1;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

int publish_buffer(int dirfd, const char *name, const void *buf, size_t len, mode_t mode)
{
    publish_tmp t;
    int fd = publish_open(&t, dirfd, name, mode);
    if (fd < 0)
        return -1;
    int ok = publish_write_all(fd, buf, len) == 0;
    int saved = errno;
    if (close(fd) != 0 && ok) {
        ok = 0;
        saved = errno;
    }
    if (!ok) {
        publish_finish(&t, 0);
        errno = saved;
        return -1;
    }
    return publish_finish(&t, 1);
}

int publish_open_dir(const char *path)
{
    return open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* A directory kept open: a run's pid directory, so that its files are made
 * whatever the process later does to its view of paths. A daemon that
 * chroots (OpenSSH's privilege-separated child, postfix, vsftpd) lost every
 * profile, written by a path it no longer saw. The descriptor is used only
 * while it still names that directory: a program that closes every
 * descriptor may have reused the number for a file or a directory of its own. */
static struct {
    int fd;
    dev_t dev;
    ino_t ino;
    char path[4096];
} held = { .fd = -1 };

static int held_is_ours(void)
{
    struct stat st;
    return held.fd >= 0 && fstat(held.fd, &st) == 0 && st.st_dev == held.dev && st.st_ino == held.ino;
}

int publish_hold_dir(const char *path)
{
    struct stat st;
    if (held_is_ours())
        close(held.fd);   /* a forked child's copy of its parent's */
    held.fd = -1;
    if (snprintf(held.path, sizeof held.path, "%s", path) >= (int)sizeof held.path)
        return -1;
    int fd = publish_open_dir(path);
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    held.dev = st.st_dev;
    held.ino = st.st_ino;
    held.fd = fd;
    return 0;
}

int publish_give_held_dir(uid_t uid)
{
    return held_is_ours() ? fchown(held.fd, uid, (gid_t)-1) : -1;
}

int publish_open_parent(const char *path, int nofollow, char *name, size_t namelen)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (snprintf(name, namelen, "%s", base) >= (int)namelen ||
        (slash && (size_t)(slash - path) >= sizeof dir)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else {
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = '\0';
    }
    if (!strcmp(dir, held.path) && held_is_ours())
        return fcntl(held.fd, F_DUPFD_CLOEXEC, 0);
    return open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
}

int publish_open_append(const char *path)
{
    char name[256];
    int dirfd = publish_open_parent(path, 1, name, sizeof name);
    if (dirfd < 0)
        return -1;
    int fd = openat(dirfd, name, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    int saved = errno;
    close(dirfd);
    errno = saved;
    return fd;
}

/* One component: made, or already a real directory. */
static int publish_mkdir_one(const char *path, mode_t mode)
{
    struct stat st;
    if (mkdir(path, mode) == 0)
        return 0;
    if (errno != EEXIST)
        return -1;
    if (lstat(path, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

int publish_mkdirs(const char *path, mode_t mode)
{
    char buf[4096];
    struct stat st;
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        /* Parents may be links the user chose: stat, not lstat. */
        if (stat(buf, &st) != 0 && (mkdir(buf, mode) != 0 && errno != EEXIST))
            return -1;
        *p = '/';
    }
    return publish_mkdir_one(buf, mode);
}

/*
 * manifest.c - appends the records of manifest.h.
 *
 * Append-only, one write(2) per record on an O_APPEND descriptor opened
 * for that record: lines from concurrent threads never interleave, a
 * process killed at any moment leaves every record before it intact, and
 * no descriptor of the file is held between records (it would count
 * against the program's own). A record is a few bytes, so it usually still fits in
 * the manifest's last block when the disk is full and a profile is not.
 * Opened through the pid directory wasp holds (publish.h): a process that
 * chroots still reaches it.
 * No stdio (snprintf only), no allocation.
 */
#include "manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "publish.h"

static char manifest_path[700];

static void manifest_append(const char *line, int len)
{
    if (!manifest_path[0] || len <= 0)
        return;
    int fd = publish_open_append(manifest_path);
    if (fd < 0)
        return;
    ssize_t n;
    do
        n = write(fd, line, (size_t)len);
    while (n < 0 && errno == EINTR);
    close(fd);
}

int manifest_open(const char *pid_dir, int pid)
{
    struct stat st;
    if (snprintf(manifest_path, sizeof manifest_path, "%s/%s", pid_dir, MANIFEST_NAME) >=
        (int)sizeof manifest_path) {
        manifest_path[0] = '\0';
        return -1;
    }
    /* The pid directory is ours (0700, made by publish_mkdirs): O_NOFOLLOW
     * is all a planted link needs. Not O_EXCL: an exec'd image of the same
     * process appends to its predecessor's records. */
    int fd = open(manifest_path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
                  PUBLISH_FILE_MODE);
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0)
            close(fd);
        manifest_path[0] = '\0';
        return -1;
    }
    close(fd);
    char line[64];
    int len = st.st_size ? snprintf(line, sizeof line, "image\t%d\n", pid)
                         : snprintf(line, sizeof line, MANIFEST_MAGIC "\t%d\npid\t%d\n",
                                    MANIFEST_VERSION, pid);
    manifest_append(line, len);
    return 0;
}

void manifest_started(int tid)
{
    char line[32];
    manifest_append(line, snprintf(line, sizeof line, "start\t%d\n", tid));
}

void manifest_wrote(int tid)
{
    char line[32];
    manifest_append(line, snprintf(line, sizeof line, "wrote\t%d\n", tid));
}

void manifest_lost(int tid, const char *reason)
{
    char line[96];
    manifest_append(line, snprintf(line, sizeof line, "lost\t%d\t%s\n", tid, reason));
}

void manifest_exited(void)
{
    manifest_append("exit\n", 5);
}

void manifest_ended(void)
{
    manifest_append("ended\n", 6);
}

void manifest_sandboxed(void)
{
    manifest_append("sandboxed\n", 10);
}

void manifest_give(uid_t uid)
{
    int fd = manifest_path[0] ? publish_open_append(manifest_path) : -1;
    if (fd < 0)
        return;
    if (fchown(fd, uid, (gid_t)-1) != 0) {
        /* nothing to do: its records then fail, and the report says profiles are missing */
    }
    close(fd);
}

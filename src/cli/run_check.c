/*
 * run_check.c - what `wasp run` can tell about a command that wasp may not
 * reach: a statically linked program has no dynamic loader, so LD_PRELOAD
 * never brings libwasp.so into it; and a run that left no profile at all
 * must say so rather than point the user at an empty directory.
 */
#include "run_check.h"

#include <dirent.h>
#include <errno.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "publish.h"

/* The file execvp would run for cmd, into path; 0 or -1. */
static int resolve_command(const char *cmd, char *path, size_t len)
{
    if (strchr(cmd, '/'))
        return snprintf(path, len, "%s", cmd) < (int)len ? 0 : -1;
    const char *dirs = getenv("PATH");
    if (!dirs || !*dirs)
        dirs = "/usr/local/bin:/usr/bin:/bin";
    while (*dirs) {
        size_t n = strcspn(dirs, ":");
        if (n > 0 && (size_t)snprintf(path, len, "%.*s/%s", (int)n, dirs, cmd) < len &&
            access(path, X_OK) == 0)
            return 0;
        dirs += n + (dirs[n] == ':');
    }
    return -1;
}

/* A 64-bit ELF executable with no PT_INTERP: the kernel starts it without
 * ld.so, so nothing reads LD_PRELOAD. */
static int elf_is_static(int fd)
{
    Elf64_Ehdr eh;
    if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) ||
        eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 4096)
        return 0;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != (ssize_t)sizeof(ph))
            return 0;
        if (ph.p_type == PT_INTERP)
            return 0;
    }
    return 1;
}

int run_check_static(const char *cmd, char *path, size_t len)
{
    if (resolve_command(cmd, path, len) < 0)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int is_static = elf_is_static(fd);
    close(fd);
    return is_static;
}

int run_check_dir(const char *dir, char *err, size_t errlen)
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
    /* access() would say yes to root on a read-only mount or /proc: try. */
    char probe[64];
    snprintf(probe, sizeof probe, ".wasp-write-check.%d", (int)getpid());
    int fd = publish_open_dir(dir);
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

size_t run_check_count_profiles(const char *dir)
{
    char sub[PATH_MAX];
    size_t n = 0;
    DIR *top = opendir(dir);
    if (!top)
        return 0;
    for (struct dirent *e; (e = readdir(top));) {
        if (e->d_name[0] == '.' || (size_t)snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name) >= sizeof(sub))
            continue;
        DIR *pid = opendir(sub);
        if (!pid)
            continue;
        for (struct dirent *f; (f = readdir(pid));) {
            size_t l = strlen(f->d_name);
            n += l > 5 && strcmp(f->d_name + l - 5, ".wasp") == 0;
        }
        closedir(pid);
    }
    closedir(top);
    return n;
}

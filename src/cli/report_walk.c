/*
 * report_walk.c - collects DIR/<pid>/<tid>-<n>.wasp (or, for a thread
 * that had not ended when its process died, <tid>-<n>.checkpoint) and
 * DIR/<pid>/manifest.
 *
 * Every directory below DIR is opened relative to its parent's descriptor
 * with O_NOFOLLOW and every entry is looked at with AT_SYMLINK_NOFOLLOW:
 * a link planted in a run directory (a loop, `ln -s /`) is counted and
 * skipped, never read through. Unreadable directories are errors: a report
 * that quietly leaves out a process is worse than none.
 */
#include "report_walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "manifest.h"
#include "profile.h"
#include "merge_internal.h"

#define REPORT_MAX_DEPTH 4  /* DIR/<pid>/<tid>.wasp needs 2; deeper is a mistake */

static void walk_error(const char *path, const char *what)
{
    fprintf(stderr, "[wasp] ERROR %s: %s\n", path, what);
}

static int walk_add(report_paths *ps, const char *path)
{
    if (merge_grow((void **)&ps->v, &ps->cap, ps->n, sizeof *ps->v) != 0 ||
        !(ps->v[ps->n] = strdup(path))) {
        walk_error(path, "out of memory");
        return -1;
    }
    ps->n++;
    return 0;
}

static int walk_ends_with(const char *name, const char *suffix)
{
    size_t n = strlen(name), k = strlen(suffix);
    return n > k && !strcmp(name + n - k, suffix);
}

static int walk_is_profile_name(const char *name)
{
    return name[0] != '.' && (walk_ends_with(name, ".wasp") ||
                              walk_ends_with(name, PROFILE_CHECKPOINT_SUFFIX));
}

int report_walk_is_checkpoint(const char *path)
{
    return walk_ends_with(path, PROFILE_CHECKPOINT_SUFFIX);
}

static int walk_path_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether the sorted paths hold the final profile of checkpoint p. */
static int walk_has_final(const report_paths *ps, const char *p)
{
    size_t len = strlen(p) - strlen(PROFILE_CHECKPOINT_SUFFIX);
    char *final = malloc(len + sizeof ".wasp");
    if (!final) return 0;
    memcpy(final, p, len);
    memcpy(final + len, ".wasp", sizeof ".wasp");
    int found = bsearch(&final, ps->v, ps->n, sizeof *ps->v, walk_path_cmp) != NULL;
    free(final);
    return found;
}

size_t report_walk_supersede(report_paths *ps)
{
    size_t n = 0, dropped = 0;
    /* Marked first, removed after: the search needs the whole sorted list. */
    unsigned char *drop = ps->n ? calloc(ps->n, 1) : NULL;
    if (!drop) return 0;
    for (size_t i = 0; i < ps->n; i++)
        drop[i] = report_walk_is_checkpoint(ps->v[i]) && walk_has_final(ps, ps->v[i]);
    for (size_t i = 0; i < ps->n; i++) {
        if (drop[i]) {
            free(ps->v[i]);
            dropped++;
        } else {
            ps->v[n++] = ps->v[i];
        }
    }
    ps->n = n;
    free(drop);
    return dropped;
}

static int walk_dir(report_paths *ps, completeness *c, int fd, const char *dir, int depth);

/* One entry of the directory fd (path for messages). */
static int walk_entry(report_paths *ps, completeness *c, int fd, const char *name,
                      const char *path, int depth)
{
    struct stat st;
    char err[1024];
    if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) return 0;      /* gone meanwhile (a temp file renamed) */
        walk_error(path, strerror(errno));
        return -1;
    }
    if (S_ISLNK(st.st_mode)) {
        ps->links++;
        return 0;
    }
    if (S_ISDIR(st.st_mode) && depth < REPORT_MAX_DEPTH) {
        int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) {
            walk_error(path, strerror(errno));
            return -1;
        }
        return walk_dir(ps, c, sub, path, depth + 1);
    }
    if (!strcmp(name, MANIFEST_NAME) && S_ISREG(st.st_mode)) {
        if (completeness_read(c, fd, name, path, err, sizeof err) == 0) return 0;
        fprintf(stderr, "[wasp] ERROR %s \xe2\x80\x94 remove the manifest to report without "
                "knowing whether profiles are missing\n", err);
        return -1;
    }
    /* A FIFO or device named *.wasp is added: the reader refuses it by name. */
    return walk_is_profile_name(name) ? walk_add(ps, path) : 0;
}

/* Takes fd (closed here). */
static int walk_dir(report_paths *ps, completeness *c, int fd, const char *dir, int depth)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        walk_error(dir, strerror(errno));
        close(fd);
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;   /* ".", "..", and hidden temp files */
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *path = malloc(len);
        if (!path) {
            walk_error(dir, "out of memory");
            rc = -1;
            break;
        }
        snprintf(path, len, "%s/%s", dir, e->d_name);
        rc = walk_entry(ps, c, dirfd(d), e->d_name, path, depth);
        free(path);
    }
    closedir(d);
    return rc;
}

int report_walk_find(report_paths *ps, completeness *c, const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        walk_error(dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) return walk_add(ps, dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        walk_error(dir, strerror(errno));
        return -1;
    }
    if (walk_dir(ps, c, fd, dir, 1) != 0) return -1;
    if (ps->n) qsort(ps->v, ps->n, sizeof *ps->v, walk_path_cmp);
    ps->superseded = report_walk_supersede(ps);
    return 0;
}

void report_walk_free(report_paths *ps)
{
    for (size_t i = 0; i < ps->n; i++) free(ps->v[i]);
    free(ps->v);
    memset(ps, 0, sizeof *ps);
}

/*
 * completeness.c - manifests read, profiles counted (completeness.h).
 *
 * A manifest is append-only and its process may die between any two
 * records, so a last line without its newline is ignored, not an error.
 * A process with no exit record after its last image was killed (or has
 * not ended yet): its threads' missing profiles are put down to that.
 */
#include "completeness.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "manifest.h"
#include "merge_internal.h"
#include "num.h"

static const char *const comp_reason_words[COMP_NREASONS] = {
    MANIFEST_LOST_DISK_FULL, MANIFEST_LOST_WRITE, MANIFEST_LOST_FDS, MANIFEST_LOST_MEMORY,
    MANIFEST_LOST_EVENTS, "",
};

static const char *const comp_reason_text[COMP_NREASONS] = {
    "the disk was full", "write errors", "over the descriptor budget: raise `ulimit -n`",
    "out of memory", "its sampler or watchpoints could not be opened", "lost",
};

static enum comp_reason comp_reason_of(const char *word)
{
    for (int i = 0; i < COMP_OTHER; i++)
        if (!strcmp(word, comp_reason_words[i])) return (enum comp_reason)i;
    return COMP_OTHER;
}

/* One record of a manifest into pr; 0, or -1 when malformed. */
static int comp_record(comp_process *pr, char *line, unsigned long n)
{
    char *arg = strchr(line, '\t');
    uint64_t v;
    if (arg) *arg++ = '\0';
    if (n == 1) return strcmp(line, MANIFEST_MAGIC) || !arg || strcmp(arg, "1") ? -1 : 0;
    if (!strcmp(line, "exit") || !strcmp(line, "ended")) {
        pr->exited = 1;
        pr->ended = !strcmp(line, "ended");
        return arg ? -1 : 0;
    }
    if (!strcmp(line, "sandboxed")) {
        pr->sandboxed = 1;
        return arg ? -1 : 0;
    }
    if (!arg) return -1;
    char *reason = strchr(arg, '\t');
    if (reason) *reason++ = '\0';
    if (num_parse_u64(arg, &v) != NUM_OK || v > INT64_MAX) return -1;
    if (!strcmp(line, "pid") && n == 2) pr->pid = (int64_t)v;
    else if (!strcmp(line, "image")) pr->exited = pr->ended = 0;
    else if (!strcmp(line, "start")) pr->started++;
    else if (!strcmp(line, "wrote")) pr->wrote++;
    else if (!strcmp(line, "lost") && reason) pr->lost[comp_reason_of(reason)]++;
    else return -1;
    return 0;
}

int64_t completeness_pid_of(const char *path)
{
    const char *end = strrchr(path, '/'), *start = end;
    char buf[32];
    uint64_t pid;
    while (start && start > path && start[-1] != '/') start--;
    if (!end || (size_t)(end - start) >= sizeof buf) return -1;
    memcpy(buf, start, (size_t)(end - start));
    buf[end - start] = '\0';
    return num_parse_u64(buf, &pid) == NUM_OK && pid <= INT64_MAX ? (int64_t)pid : -1;
}

static int comp_parse(comp_process *pr, FILE *f, const char *path, char *err, size_t errlen)
{
    char line[256];
    unsigned long n = 0;
    memset(pr, 0, sizeof *pr);
    pr->pid = -1;
    while (fgets(line, sizeof line, f)) {
        size_t len = strlen(line);
        n++;
        if (len == 0 || line[len - 1] != '\n') {
            if (feof(f)) break;     /* cut short by a kill: ignore it */
            snprintf(err, errlen, "%s:%lu: damaged manifest (line too long)", path, n);
            return -1;
        }
        line[len - 1] = '\0';
        if (comp_record(pr, line, n) != 0) {
            snprintf(err, errlen, "%s:%lu: damaged manifest (bad record)", path, n);
            return -1;
        }
    }
    if (n == 0) pr->pid = completeness_pid_of(path);   /* created on a full disk, never written */
    if (pr->pid < 0) {
        snprintf(err, errlen, "%s: damaged manifest (no pid record)", path);
        return -1;
    }
    return 0;
}

int completeness_read(completeness *c, int dirfd, const char *name, const char *path,
                      char *err, size_t errlen)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    comp_process pr;
    int rc = comp_parse(&pr, f, path, err, errlen);
    fclose(f);
    if (rc != 0) return -1;
    if (merge_grow((void **)&c->procs, &c->cap_procs, c->nprocs, sizeof *c->procs) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    c->procs[c->nprocs++] = pr;
    return 0;
}

int completeness_found(completeness *c, int64_t pid, uint64_t threads)
{
    if (merge_grow((void **)&c->found, &c->cap_found, c->nfound, sizeof *c->found) != 0)
        return -1;
    c->found[c->nfound].pid = pid;
    c->found[c->nfound++].threads = threads;
    return 0;
}

static int comp_pid_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Fills each process's found count: both sorted by pid, then merged. */
static void comp_count_found(completeness *c)
{
    /* Both start with their pid. */
    if (c->nfound) qsort(c->found, c->nfound, sizeof *c->found, comp_pid_cmp);
    if (c->nprocs) qsort(c->procs, c->nprocs, sizeof *c->procs, comp_pid_cmp);
    /* A copied pid directory brings its manifest twice: keep one. */
    size_t n = 0;
    for (size_t i = 0; i < c->nprocs; i++)
        if (n == 0 || c->procs[i].pid != c->procs[n - 1].pid) c->procs[n++] = c->procs[i];
    c->nprocs = n;
    size_t j = 0;
    for (size_t i = 0; i < c->nprocs; i++) {
        comp_process *pr = &c->procs[i];
        while (j < c->nfound && c->found[j].pid < pr->pid) j++;
        pr->found = 0;
        /* An exec'd image shares its pid (and manifest) with the one before. */
        for (size_t k = j; k < c->nfound && c->found[k].pid == pr->pid; k++)
            pr->found += c->found[k].threads;
    }
}

/* Appends ", N: why" (or "N: why" first) to msg. */
static void comp_part(char *msg, size_t len, uint64_t n, const char *why)
{
    size_t at = strlen(msg);
    if (n && at < len)
        snprintf(msg + at, len - at, "%s%" PRIu64 ": %s", at && msg[at - 1] != '(' ? ", " : "",
                 n, why);
}

uint64_t completeness_missing(completeness *c, int64_t only_pid, char *msg, size_t len)
{
    uint64_t started = 0, missing = 0, lost[COMP_NREASONS] = { 0 }, killed = 0, unwritten = 0;
    size_t nkilled = 0;
    int64_t killed_pid = 0;
    comp_count_found(c);
    for (size_t i = 0; i < c->nprocs; i++) {
        const comp_process *pr = &c->procs[i];
        if (only_pid >= 0 && pr->pid != only_pid) continue;
        uint64_t miss = pr->started > pr->found ? pr->started - pr->found : 0, told = 0;
        started += pr->started;
        missing += miss;
        for (int r = 0; r < COMP_NREASONS; r++) {
            uint64_t k = pr->lost[r] < miss - told ? pr->lost[r] : miss - told;
            lost[r] += k;
            told += k;
        }
        if (!pr->exited && miss > told) {
            killed += miss - told;
            nkilled++;
            killed_pid = pr->pid;
        } else {
            unwritten += miss - told;
        }
    }
    if (!missing) return 0;
    char why[128];
    snprintf(msg, len, "%" PRIu64 " of %" PRIu64 " threads' profiles missing (", missing, started);
    if (nkilled == 1)
        snprintf(why, sizeof why, "process %" PRId64 " was killed (or exec'd) before it wrote them",
                 killed_pid);
    else
        snprintf(why, sizeof why, "%zu processes were killed (or exec'd) before they wrote them",
                 nkilled);
    comp_part(msg, len, killed, why);
    for (int r = 0; r < COMP_NREASONS; r++) comp_part(msg, len, lost[r], comp_reason_text[r]);
    comp_part(msg, len, unwritten, "not found, though their process exited");
    size_t at = strlen(msg);
    if (at + 1 < len) memcpy(msg + at, ")", 2);
    return missing;
}

uint64_t completeness_processes(const completeness *c)
{
    return c->nprocs;
}

uint64_t completeness_sandboxed(const completeness *c)
{
    uint64_t n = 0;
    for (size_t i = 0; i < c->nprocs; i++) n += c->procs[i].sandboxed != 0;
    return n;
}

uint64_t completeness_ended(const completeness *c)
{
    uint64_t n = 0;
    for (size_t i = 0; i < c->nprocs; i++) n += c->procs[i].ended != 0;
    return n;
}

void completeness_free(completeness *c)
{
    free(c->procs);
    free(c->found);
    memset(c, 0, sizeof *c);
}

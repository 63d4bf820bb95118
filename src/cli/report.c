/*
 * report.c - the `wasp report` command.
 *
 * Owns the command line, loading the profiles report_walk.c finds one by
 * one into the merge model, saying what the run is missing (completeness.c),
 * and writing the result: atomically over a regular file, in place into a
 * device or FIFO. It refuses rather than guesses: a damaged profile, a run
 * without profiles, or profiles of different modes are errors, and a run
 * whose manifests say profiles are missing is said to be incomplete (an
 * error under --strict), because a report silently missing threads would
 * show wrong fractions.
 */
#include "report.h"

#include "completeness.h"
#include "merge.h"
#include "num.h"
#include "out_collapsed.h"
#include "out_html.h"
#include "out_json.h"
#include "out_pprof.h"
#include "out_text.h"
#include "profile.h"
#include "publish.h"
#include "report_walk.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REPORT_USAGE "usage: wasp report DIR [--format text|json|html|collapsed|pprof] [--top N] " \
                     "[--side watch|trap] [--pid PID] [--strict] [-o FILE]"

enum report_format { REPORT_AUTO, REPORT_TEXT, REPORT_JSON, REPORT_HTML, REPORT_COLLAPSED,
                     REPORT_PPROF };

/* -o FILE picks the format by extension, as async-profiler does. pprof has
 * two: go tool pprof writes .pb.gz, and some tools name them .pprof. */
static const struct { const char *name, *ext; enum report_format format; } report_formats[] = {
    { "text", ".txt", REPORT_TEXT },
    { "json", ".json", REPORT_JSON },
    { "html", ".html", REPORT_HTML },
    { "collapsed", ".collapsed", REPORT_COLLAPSED },
    { "pprof", ".pb.gz", REPORT_PPROF },
    { "pprof", ".pprof", REPORT_PPROF },
};
#define REPORT_NFORMATS (sizeof report_formats / sizeof report_formats[0])

typedef struct report_opts {
    const char *dir;
    const char *out;        /* NULL or "-": stdout */
    enum report_format format;
    enum collapsed_side side;
    size_t top;
    int top_set;
    int64_t pid;
    int pid_set;
    int strict;             /* missing profiles are an error, not a warning */
    int64_t written_ns;     /* when the newest profile loaded was written (pprof's time) */
} report_opts;

static void report_error(const char *fmt, ...)
{
    va_list ap;
    fputs("[wasp] ERROR ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static int report_usage_error(const char *fmt, const char *arg)
{
    report_error(fmt, arg);
    fprintf(stderr, "%s\n", REPORT_USAGE);
    return 2;
}

/* ---- command line ---- */

static int report_option(report_opts *o, const char *name, const char *val)
{
    uint64_t n;
    if (!strcmp(name, "--format")) {
        size_t k = 0;
        while (k < REPORT_NFORMATS && strcmp(val, report_formats[k].name) != 0) k++;
        if (k == REPORT_NFORMATS)
            return report_usage_error("--format must be text, json, html, collapsed or pprof, "
                                      "not '%s'", val);
        o->format = report_formats[k].format;
    } else if (!strcmp(name, "--side")) {
        if (!strcmp(val, "watch")) o->side = COLLAPSED_WATCH;
        else if (!strcmp(val, "trap")) o->side = COLLAPSED_TRAP;
        else return report_usage_error("--side must be watch or trap, not '%s'", val);
    } else if (!strcmp(name, "--top")) {
        if (num_parse_u64(val, &n) != NUM_OK || n > SIZE_MAX)
            return report_usage_error("--top needs a count from 0 (all) to 18446744073709551615, "
                                      "not '%s'", val);
        o->top = (size_t)n;
        o->top_set = 1;
    } else if (!strcmp(name, "--pid")) {
        if (num_parse_u64(val, &n) != NUM_OK || n > INT64_MAX)
            return report_usage_error("--pid needs a process id (a decimal number), not '%s'",
                                      val);
        o->pid = (int64_t)n;
        o->pid_set = 1;
    } else {
        o->out = val;
    }
    return 0;
}

/* Accepts "--opt VALUE", "--opt=VALUE" and "-o FILE" anywhere. Returns 0,
 * 1 when help was printed, or 2 on a usage error. */
static int report_parse(report_opts *o, int argc, char **argv)
{
    static const char *const with_value[] = { "--format", "--top", "--pid", "--side", "-o",
                                              "--output" };
    int positional_only = 0;
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (positional_only || a[0] != '-' || !strcmp(a, "-")) {
            if (o->dir) return report_usage_error("unexpected argument '%s'", a);
            o->dir = a;
            continue;
        }
        if (!strcmp(a, "--")) { positional_only = 1; continue; }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { printf("%s\n", REPORT_USAGE); return 1; }
        if (!strcmp(a, "--strict")) { o->strict = 1; continue; }
        size_t k = 0, nlen = strcspn(a, "=");
        while (k < 6 && (strlen(with_value[k]) != nlen || strncmp(a, with_value[k], nlen)))
            k++;
        if (k == 6) return report_usage_error("unknown option '%s'", a);
        const char *val = a[nlen] == '=' ? a + nlen + 1 : NULL;
        if (!val && i + 1 >= argc) return report_usage_error("option %s needs a value", a);
        if (!val) val = argv[++i];
        if (report_option(o, k >= 4 ? "-o" : with_value[k], val) != 0) return 2;
    }
    if (!o->dir) return report_usage_error("%s", "missing run directory");
    return 0;
}

/* ---- loading and writing ---- */

/* A thread's profile is written when it ends, so the newest one says when
 * the run ended; 0 when unknown. */
static int64_t report_written_ns(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) return 0;
    return (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
}

/* Loads every profile found into the model (copies counted once), and
 * tells its process's manifest that it was found. */
static int report_load(merge_model *m, completeness *c, const report_paths *ps, report_opts *o)
{
    char err[1024];
    for (size_t i = 0; i < ps->n; i++) {
        profile p;
        if (profile_read_at(AT_FDCWD, ps->v[i], ps->v[i], &p, err, sizeof err) != 0) {
            /* Published by rename, so only a damaged disk (or hand) makes
             * a bad checkpoint; its thread then counts as missing. */
            if (report_walk_is_checkpoint(ps->v[i])) {
                fprintf(stderr, "[wasp] WARN %s \xe2\x80\x94 a damaged checkpoint, left out\n",
                        err);
                continue;
            }
            report_error("%s \xe2\x80\x94 move the file out of the run directory to report "
                         "the rest", err);
            return -1;
        }
        int rc = 0;
        size_t before = m->duplicates;
        if (!o->pid_set || p.pid == o->pid) {
            rc = merge_add(m, &p, ps->v[i], err, sizeof err);
            if (rc == 0 && m->duplicates == before && completeness_found(c, p.pid, profile_threads(&p)) != 0)
                snprintf(err, sizeof err, "out of memory"), rc = -1;
            int64_t ns = report_written_ns(ps->v[i]);
            if (ns > o->written_ns) o->written_ns = ns;
        }
        profile_free(&p);
        if (rc != 0) {
            report_error("%s", err);
            return -1;
        }
    }
    return 0;
}

/* What the run is missing, said on stderr (an error under --strict) and
 * kept for the report itself; no profile at all is an error. */
static int report_check_complete(merge_model *m, completeness *c, const report_paths *ps,
                                 const report_opts *o, char *msg, size_t len)
{
    msg[0] = '\0';
    uint64_t missing = completeness_missing(c, o->pid_set ? o->pid : -1, msg, len);
    if (ps->links)
        fprintf(stderr, "[wasp] INFO %zu symbolic link%s in %s not followed\n", ps->links,
                ps->links == 1 ? "" : "s", o->dir);
    if (m->duplicates)
        fprintf(stderr, "[wasp] INFO %zu profile file%s repeated another and counted once\n",
                m->duplicates, m->duplicates == 1 ? "" : "s");
    if (m->nthreads == 0 && o->pid_set && ps->n) {
        report_error("no profiles of pid %" PRId64 " in %s%s%s", o->pid, o->dir,
                     missing ? ": " : "", msg);
        return -1;
    }
    if (m->nthreads == 0) {
        if (missing) report_error("no profiles in %s: %s", o->dir, msg);
        else report_error("no profiles in %s \xe2\x80\x94 did the program run under `wasp run`?",
                          o->dir);
        return -1;
    }
    if (m->checkpoints)
        fprintf(stderr, "[wasp] WARN %zu of %zu threads from checkpoints: the program did not end "
                "normally (killed or crashed?); their data ends at their last checkpoint\n",
                m->checkpoints, m->nthreads);
    if (ps->superseded)
        fprintf(stderr, "[wasp] INFO %zu checkpoint%s left out: %s thread%s final profile%s there\n",
                ps->superseded, ps->superseded == 1 ? "" : "s", ps->superseded == 1 ? "its" : "their",
                ps->superseded == 1 ? "'s" : "s'", ps->superseded == 1 ? " is" : "s are");
    if (missing && o->strict) {
        report_error("incomplete run: %s \xe2\x80\x94 drop --strict to report what is there", msg);
        return -1;
    }
    if (missing) {
        fprintf(stderr, "[wasp] WARN incomplete run: %s\n", msg);
        m->incomplete = msg;
    }
    return 0;
}

static int report_render(FILE *f, const merge_model *m, enum report_format format,
                         const report_opts *o)
{
    switch (format) {
    case REPORT_JSON: return json_write_report(f, m, o->top_set ? o->top : 0);
    case REPORT_HTML: return html_write_report(f, m, o->top_set ? o->top : HTML_DEFAULT_TOP);
    case REPORT_COLLAPSED: return collapsed_write_report(f, m, o->side);
    case REPORT_PPROF: return pprof_write_report(f, m, o->written_ns);
    default: return text_write_report(f, m, o->top_set ? o->top : 10);
    }
}

/* --format, else the extension of -o FILE, else text. */
static enum report_format report_pick_format(const report_opts *o, int to_stdout)
{
    if (o->format != REPORT_AUTO) return o->format;
    if (to_stdout) return REPORT_TEXT;
    size_t n = strlen(o->out);
    for (size_t k = 0; k < REPORT_NFORMATS; k++) {
        size_t e = strlen(report_formats[k].ext);
        if (n > e && !strcmp(o->out + n - e, report_formats[k].ext))
            return report_formats[k].format;
    }
    return REPORT_TEXT;
}

typedef int (*report_render_fn)(FILE *, const void *);

/* Renders into f and closes it; 0, or -1 with errno set. */
static int report_render_close(FILE *f, report_render_fn render, const void *arg)
{
    errno = 0;
    int bad = render(f, arg) != 0 || fflush(f) != 0 || ferror(f);
    int saved = errno ? errno : EIO;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    errno = saved;
    return bad ? -1 : 0;
}

/* A device, a FIFO or a terminal named by -o is written, never replaced
 * (root's `-o /dev/null` once replaced /dev/null with a regular file). */
static int report_write_in_place(const char *out, report_render_fn render, const void *arg)
{
    int fd = open(out, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f || report_render_close(f, render, arg) != 0) {
        report_error("%s: %s", out, strerror(errno));
        if (!f && fd >= 0) close(fd);
        return -1;
    }
    return 0;
}

/* A regular file (or none yet) is replaced atomically (publish.c), so a
 * reader of -o FILE never sees a partial report; a new one is 0600 (it
 * names the program's files and functions), a replaced one keeps its mode. */
int report_publish_file(const char *out, report_render_fn render, const void *arg)
{
    struct stat st;
    char name[256];
    int exists = stat(out, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        report_error("-o %s is a directory \xe2\x80\x94 give a file name", out);
        return -1;
    }
    if (exists && !S_ISREG(st.st_mode)) return report_write_in_place(out, render, arg);
    mode_t mode = exists ? st.st_mode & 07777 : PUBLISH_FILE_MODE;
    publish_tmp t;
    int ok = 0, dirfd = publish_open_parent(out, 0, name, sizeof name);
    int fd = dirfd >= 0 ? publish_open(&t, dirfd, name, mode) : -1;
    if (fd >= 0) {
        /* The umask may have narrowed the mode of a file being replaced. */
        FILE *f = fchmod(fd, mode) == 0 ? fdopen(fd, "w") : NULL;
        if (f) ok = report_render_close(f, render, arg) == 0;
        else close(fd);
        int saved = errno;
        ok = publish_finish(&t, ok) == 0;
        if (!ok && saved) errno = saved;
    }
    if (!ok) report_error("%s: %s", out, strerror(errno ? errno : EIO));
    if (dirfd >= 0) close(dirfd);
    return ok ? 0 : -1;
}

typedef struct report_job {
    const merge_model *m;
    enum report_format format;
    const report_opts *o;
} report_job;

static int report_render_job(FILE *f, const void *arg)
{
    const report_job *j = arg;
    return report_render(f, j->m, j->format, j->o);
}

static int report_publish(const merge_model *m, enum report_format format, const report_opts *o)
{
    report_job j = { m, format, o };
    return report_publish_file(o->out, report_render_job, &j);
}

static int report_output(const merge_model *m, const report_opts *o)
{
    int to_stdout = !o->out || !strcmp(o->out, "-");
    enum report_format format = report_pick_format(o, to_stdout);
    if (!to_stdout) return report_publish(m, format, o);
    /* Compressed bytes would only garble the terminal. */
    if (format == REPORT_PPROF && isatty(STDOUT_FILENO)) {
        report_error("pprof output is binary \xe2\x80\x94 write it to a file: -o waste.pb.gz");
        return -1;
    }
    if (report_render(stdout, m, format, o) != 0 || fflush(stdout) != 0) {
        report_error("stdout: %s", strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}

int report_parse_args(int argc, char **argv)
{
    report_opts o;
    return report_parse(&o, argc, argv);
}

int report_load_run(const char *dir, merge_model *m)
{
    report_opts o;
    report_paths ps = { 0 };
    completeness c = { 0 };
    memset(&o, 0, sizeof o);
    o.dir = dir;
    int rc = report_walk_find(&ps, &c, dir) != 0 || report_load(m, &c, &ps, &o) != 0 ? -1 : 0;
    if (rc == 0) merge_finish(m);
    completeness_free(&c);
    report_walk_free(&ps);
    return rc;
}

int report_main(int argc, char **argv)
{
    report_opts o;
    int rc = report_parse(&o, argc, argv);
    if (rc != 0) return rc == 1 ? 0 : 2;
    report_paths ps = { 0 };
    completeness c = { 0 };
    merge_model m;
    char incomplete[512];
    merge_init(&m);
    rc = report_walk_find(&ps, &c, o.dir) != 0 || report_load(&m, &c, &ps, &o) != 0 ||
         report_check_complete(&m, &c, &ps, &o, incomplete, sizeof incomplete) != 0 ? 2 : 0;
    if (rc == 0) {
        merge_finish(&m);
        char why[512];
        if (merge_watch_warning(&m, why, sizeof why))
            fprintf(stderr, "[wasp] WARN %s\n", why);
        rc = report_output(&m, &o) != 0 ? 2 : 0;
    }
    merge_free(&m);
    completeness_free(&c);
    report_walk_free(&ps);
    return rc;
}

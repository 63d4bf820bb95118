/*
 * report.c - the `wasp report` command.
 *
 * Owns the command line, finding a run's profiles (DIR/<pid>/<tid>.wasp, a
 * single pid directory, or one file), loading them one by one into the
 * merge model, and publishing the result atomically. It refuses rather than
 * guesses: a damaged profile, a run without profiles, or profiles of
 * different modes are errors, because a report silently missing threads
 * would show wrong fractions.
 */
#include "report.h"

#include "merge.h"
#include "out_collapsed.h"
#include "out_html.h"
#include "out_json.h"
#include "out_text.h"
#include "profile.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REPORT_USAGE "usage: wasp report DIR [--format text|json|html|collapsed] [--top N] " \
                     "[--side watch|trap] [--pid PID] [-o FILE]"
#define REPORT_MAX_DEPTH 4  /* DIR/<pid>/<tid>.wasp needs 2; deeper is a mistake or a loop */

enum report_format { REPORT_AUTO, REPORT_TEXT, REPORT_JSON, REPORT_HTML, REPORT_COLLAPSED };

/* -o FILE picks the format by extension, as async-profiler does. */
static const struct { const char *name, *ext; enum report_format format; } report_formats[] = {
    { "text", ".txt", REPORT_TEXT },
    { "json", ".json", REPORT_JSON },
    { "html", ".html", REPORT_HTML },
    { "collapsed", ".collapsed", REPORT_COLLAPSED },
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
} report_opts;

typedef struct report_paths {
    char **v;
    size_t n, cap;
} report_paths;

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

static int report_number(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s) return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10) return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

static int report_option(report_opts *o, const char *name, const char *val)
{
    uint64_t n;
    if (!strcmp(name, "--format")) {
        size_t k = 0;
        while (k < REPORT_NFORMATS && strcmp(val, report_formats[k].name) != 0) k++;
        if (k == REPORT_NFORMATS)
            return report_usage_error("--format must be text, json, html or collapsed, not '%s'",
                                      val);
        o->format = report_formats[k].format;
    } else if (!strcmp(name, "--side")) {
        if (!strcmp(val, "watch")) o->side = COLLAPSED_WATCH;
        else if (!strcmp(val, "trap")) o->side = COLLAPSED_TRAP;
        else return report_usage_error("--side must be watch or trap, not '%s'", val);
    } else if (!strcmp(name, "--top")) {
        if (report_number(val, &n) != 0 || n > SIZE_MAX)
            return report_usage_error("--top needs a count, not '%s'", val);
        o->top = (size_t)n;
        o->top_set = 1;
    } else if (!strcmp(name, "--pid")) {
        if (report_number(val, &n) != 0 || n > INT64_MAX)
            return report_usage_error("--pid needs a process id, not '%s'", val);
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

/* ---- finding profiles ---- */

static int report_add_path(report_paths *ps, const char *path)
{
    if (ps->n == ps->cap) {
        size_t ncap = ps->cap ? ps->cap * 2 : 32;
        char **v = realloc(ps->v, ncap * sizeof *v);
        if (!v) return -1;
        ps->v = v;
        ps->cap = ncap;
    }
    if (!(ps->v[ps->n] = strdup(path))) return -1;
    ps->n++;
    return 0;
}

static int report_is_profile_name(const char *name)
{
    size_t n = strlen(name);
    return name[0] != '.' && n > 5 && !strcmp(name + n - 5, ".wasp");
}

/* Collects every *.wasp under dir. Unreadable directories are errors: a
 * report that quietly leaves out a process is worse than none. */
static int report_walk(report_paths *ps, const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d) {
        report_error("%s: %s", dir, strerror(errno));
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;   /* ".", "..", and hidden temp files */
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *path = malloc(len);
        struct stat st;
        if (!path) { report_error("out of memory"); rc = -1; break; }
        snprintf(path, len, "%s/%s", dir, e->d_name);
        if (stat(path, &st) != 0) {
            /* A dangling link is not a profile; anything else is worth saying. */
            if (errno != ENOENT) { report_error("%s: %s", path, strerror(errno)); rc = -1; }
        } else if (S_ISDIR(st.st_mode) && depth < REPORT_MAX_DEPTH) {
            rc = report_walk(ps, path, depth + 1);
        } else if (S_ISREG(st.st_mode) && report_is_profile_name(e->d_name)) {
            if (report_add_path(ps, path) != 0) { report_error("out of memory"); rc = -1; }
        }
        free(path);
    }
    closedir(d);
    return rc;
}

static int report_path_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* DIR may be a run directory, one pid directory, or a single file. */
static int report_find(report_paths *ps, const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        report_error("%s: %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        if (report_add_path(ps, dir) == 0) return 0;
        report_error("out of memory");
        return -1;
    }
    if (report_walk(ps, dir, 1) != 0) return -1;
    if (ps->n) qsort(ps->v, ps->n, sizeof *ps->v, report_path_cmp);
    return 0;
}

/* ---- loading and writing ---- */

static int report_load(merge_model *m, const report_paths *ps, const report_opts *o)
{
    char err[1024];
    for (size_t i = 0; i < ps->n; i++) {
        profile p;
        if (profile_read(ps->v[i], &p, err, sizeof err) != 0) {
            report_error("%s", err);
            return -1;
        }
        int rc = 0;
        if (!o->pid_set || p.pid == o->pid) rc = merge_add(m, &p, ps->v[i], err, sizeof err);
        profile_free(&p);
        if (rc != 0) {
            report_error("%s", err);
            return -1;
        }
    }
    if (m->nthreads == 0 && o->pid_set && ps->n) {
        report_error("no profiles of pid %" PRId64 " in %s", o->pid, o->dir);
        return -1;
    }
    if (m->nthreads == 0) {
        report_error("no profiles in %s \xe2\x80\x94 did the program run under `wasp run`?",
                     o->dir);
        return -1;
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

/* Writes next to the target and renames, so a reader of -o FILE never sees
 * a partial report. */
static int report_publish(const merge_model *m, enum report_format format, const report_opts *o)
{
    size_t len = strlen(o->out) + 32;
    char *tmp = malloc(len);
    if (!tmp) { report_error("out of memory"); return -1; }
    snprintf(tmp, len, "%s.tmp.%ld", o->out, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        report_error("%s: %s", tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    int bad = report_render(f, m, format, o) != 0 || fflush(f) != 0;
    int saved = errno;
    if (fclose(f) != 0 && !bad) { bad = 1; saved = errno; }
    if (!bad && rename(tmp, o->out) != 0) { bad = 1; saved = errno; }
    if (bad) {
        report_error("%s: %s", o->out, strerror(saved ? saved : EIO));
        unlink(tmp);
    }
    free(tmp);
    return bad ? -1 : 0;
}

static int report_output(const merge_model *m, const report_opts *o)
{
    int to_stdout = !o->out || !strcmp(o->out, "-");
    enum report_format format = report_pick_format(o, to_stdout);
    if (!to_stdout) return report_publish(m, format, o);
    if (report_render(stdout, m, format, o) != 0 || fflush(stdout) != 0) {
        report_error("stdout: %s", strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}

int report_main(int argc, char **argv)
{
    report_opts o;
    int rc = report_parse(&o, argc, argv);
    if (rc != 0) return rc == 1 ? 0 : 2;
    report_paths ps = { 0 };
    merge_model m;
    merge_init(&m);
    rc = report_find(&ps, o.dir) != 0 || report_load(&m, &ps, &o) != 0 ? 2 : 0;
    if (rc == 0) {
        merge_finish(&m);
        char why[512];
        if (merge_watch_warning(&m, why, sizeof why))
            fprintf(stderr, "[wasp] WARN %s\n", why);
        rc = report_output(&m, &o) != 0 ? 2 : 0;
    }
    merge_free(&m);
    for (size_t i = 0; i < ps.n; i++) free(ps.v[i]);
    free(ps.v);
    return rc;
}

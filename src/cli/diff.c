/*
 * diff.c - the `wasp diff` command and its model (diff.h).
 *
 * Owns matching two runs' pairs and the command line; loading is
 * report.c's (the same finding, reading and merging as `wasp report`) and
 * the formats are out_diff.c's. Refuses runs of different modes: a dead
 * store fraction minus a silent store fraction means nothing.
 */
#include "diff.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "out_diff.h"
#include "report.h"

#define DIFF_USAGE "usage: wasp diff A B [--format text|json|html] [--top N] [-o FILE]"

/* A pair's identity: its two contexts, compared by program_depth frames. */
typedef struct diff_key {
    const merge_pair *q;
    size_t index;
} diff_key;

/* The C library's start-up and thread entry, which two runs name
 * differently: the exact mode reads libc's separate debug info
 * (`__libc_start_call_main (libc_start_call_main.h:58)`), the sampled mode
 * does not (`[libc.so.6+0x2724a]`). */
static int is_startup(const merge_frame *f)
{
    static const char *const names[] = { "_start", "__libc_start_main", "__libc_start_call_main",
                                         "start_thread", "clone", "clone3", "__clone", "__clone3" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(f->function, names[i]))
            return 1;
    return !strncmp(f->function, "[libc.so", 8) || !strncmp(f->function, "[ld-linux", 9);
}

/* How many frames, from the leaf, identify a context across runs: up to
 * and including `main`, and never the start-up frames below the program's
 * outermost own frame (main is often inlined away). Without this no pair
 * of a native program ever matched between an exact and a sampled run. */
static size_t program_depth(const merge_ctx *c)
{
    size_t n = c->nframes;
    for (size_t i = 0; i < c->nframes; i++)
        if (!strcmp(c->frames[i].function, "main")) {
            n = i + 1;
            break;
        }
    while (n > 1 && is_startup(&c->frames[n - 1]))
        n--;
    return n;
}

static int ctx_cmp(const merge_ctx *a, const merge_ctx *b)
{
    size_t na = program_depth(a), nb = program_depth(b);
    for (size_t i = 0; i < na && i < nb; i++) {
        const merge_frame *x = &a->frames[i], *y = &b->frames[i];
        int c = strcmp(x->function, y->function);
        if (!c) c = strcmp(x->file, y->file);
        if (!c) c = (x->line > y->line) - (x->line < y->line);
        if (c) return c;
    }
    return (na > nb) - (na < nb);
}

static int key_cmp(const void *va, const void *vb)
{
    const merge_pair *a = ((const diff_key *)va)->q, *b = ((const diff_key *)vb)->q;
    int c = ctx_cmp(a->watch, b->watch);
    return c ? c : ctx_cmp(a->trap, b->trap);
}

static int delta_cmp(const void *va, const void *vb)
{
    const diff_pair *a = va, *b = vb;
    double x = fabs(a->delta), y = fabs(b->delta);
    if (x != y) return x < y ? 1 : -1;
    double ma = fmax(a->a_share, a->b_share), mb = fmax(b->a_share, b->b_share);
    return (ma < mb) - (ma > mb);
}

static diff_key *sorted_keys(const merge_model *m)
{
    diff_key *k = malloc((m->npairs ? m->npairs : 1) * sizeof(*k));
    if (!k) return NULL;
    for (size_t i = 0; i < m->npairs; i++) k[i] = (diff_key){ &m->pairs[i], i };
    qsort(k, m->npairs, sizeof(*k), key_cmp);
    return k;
}

int diff_build(diff_model *d, const merge_model *a, const merge_model *b)
{
    memset(d, 0, sizeof(*d));
    d->a = a;
    d->b = b;
    d->fraction_delta = b->fraction - a->fraction;
    d->approx_delta = b->approx_fraction - a->approx_fraction;
    diff_key *kb = sorted_keys(b);
    char *matched = calloc(b->npairs + 1, 1);
    d->pairs = malloc((a->npairs + b->npairs + 1) * sizeof(*d->pairs));
    if (!kb || !matched || !d->pairs) {
        free(kb);
        free(matched);
        free(d->pairs);
        d->pairs = NULL;
        return -1;
    }
    for (size_t i = 0; i < a->npairs; i++) {
        const merge_pair *q = &a->pairs[i];
        diff_key probe = { q, 0 };
        const diff_key *hit = bsearch(&probe, kb, b->npairs, sizeof(*kb), key_cmp);
        diff_pair *p = &d->pairs[d->npairs++];
        *p = (diff_pair){ q->watch, q->trap, 1, hit != NULL, q->fraction, 0, 0 };
        if (hit) {
            p->b_share = hit->q->fraction;
            matched[hit->index] = 1;
        }
    }
    for (size_t i = 0; i < b->npairs; i++)
        if (!matched[i])
            d->pairs[d->npairs++] = (diff_pair){ b->pairs[i].watch, b->pairs[i].trap, 0, 1, 0,
                                                 b->pairs[i].fraction, 0 };
    for (size_t i = 0; i < d->npairs; i++)
        d->pairs[i].delta = d->pairs[i].b_share - d->pairs[i].a_share;
    qsort(d->pairs, d->npairs, sizeof(*d->pairs), delta_cmp);
    free(kb);
    free(matched);
    return 0;
}

void diff_free(diff_model *d)
{
    free(d->pairs);
    memset(d, 0, sizeof(*d));
}

/* ---- command line ---- */

typedef struct diff_opts {
    const char *a, *b, *out;
    enum diff_format format;
    int format_set;
    size_t top;
    int top_set;
} diff_opts;

static int diff_usage_error(const char *fmt, const char *arg)
{
    fputs("[wasp] ERROR ", stderr);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s\n", DIFF_USAGE);
    return 2;
}

static int diff_option(diff_opts *o, const char *name, const char *val)
{
    if (!strcmp(name, "--format")) {
        if (diff_format_from_name(val, &o->format) < 0)
            return diff_usage_error("--format must be text, json or html, not '%s' — pick one of them", val);
        o->format_set = 1;
    } else if (!strcmp(name, "--top")) {
        char *end;
        unsigned long long n = strtoull(val, &end, 10);
        if (!*val || *end || val[0] == '-')
            return diff_usage_error("--top needs a count, not '%s' — write e.g. --top 20", val);
        o->top = (size_t)n;
        o->top_set = 1;
    } else if (!strcmp(name, "-o") || !strcmp(name, "--output")) {
        o->out = val;
    } else {
        return diff_usage_error("unknown option '%s' — see wasp --help", name);
    }
    return 0;
}

static int diff_parse(diff_opts *o, int argc, char **argv)
{
    memset(o, 0, sizeof(*o));
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || !strcmp(a, "-")) {
            if (o->b) return diff_usage_error("unexpected argument '%s' — diff takes two runs", a);
            *(o->a ? &o->b : &o->a) = a;
            continue;
        }
        char name[32];
        const char *eq = strchr(a, '='), *val;
        if (eq && (size_t)(eq - a) < sizeof(name)) {
            snprintf(name, sizeof(name), "%.*s", (int)(eq - a), a);
            val = eq + 1;
        } else if (i + 1 < argc) {
            snprintf(name, sizeof(name), "%s", a);
            val = argv[++i];
        } else {
            return diff_usage_error("option '%s' needs a value", a);
        }
        if (diff_option(o, name, val) != 0) return 2;
    }
    if (!o->b) return diff_usage_error("%s", "two runs are needed — write: wasp diff A B");
    if (!o->format_set) o->format = diff_format_for_file(o->out);
    return 0;
}

typedef struct diff_job {
    const diff_model *d;
    const diff_opts *o;
} diff_job;

static int diff_render(FILE *f, const void *arg)
{
    const diff_job *j = arg;
    size_t top = j->o->top_set ? j->o->top : j->o->format == DIFF_JSON ? 0 : 20;
    return diff_write(f, j->d, j->o->format, top);
}

static int diff_output(const diff_model *d, const diff_opts *o)
{
    diff_job j = { d, o };
    if (o->out && strcmp(o->out, "-") != 0)
        return report_publish_file(o->out, diff_render, &j) != 0 ? 2 : 0;
    if (diff_render(stdout, &j) != 0 || fflush(stdout) != 0) {
        fprintf(stderr, "[wasp] ERROR cannot write the diff to stdout — check the output pipe\n");
        return 2;
    }
    return 0;
}

int diff_main(int argc, char **argv)
{
    diff_opts o;
    merge_model a, b;
    diff_model d = { 0 };
    int rc = diff_parse(&o, argc, argv);
    if (rc) return rc;
    merge_init(&a);
    merge_init(&b);
    if (report_load_run(o.a, &a) != 0 || report_load_run(o.b, &b) != 0) {
        rc = 2;
    } else if (strcmp(a.mode, b.mode) != 0) {
        fprintf(stderr, "[wasp] ERROR %s is a %s run and %s a %s run — diff two runs of the same --mode\n",
                o.a, a.mode, o.b, b.mode);
        rc = 2;
    } else if (diff_build(&d, &a, &b) != 0) {
        fprintf(stderr, "[wasp] ERROR out of memory comparing %s and %s — free some memory\n", o.a, o.b);
        rc = 2;
    } else {
        d.a_name = o.a;
        d.b_name = o.b;
        rc = diff_output(&d, &o);
    }
    diff_free(&d);
    merge_free(&a);
    merge_free(&b);
    return rc;
}

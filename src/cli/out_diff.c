/*
 * out_diff.c - `wasp diff` output: text for people, JSON for tools
 * ({a:{fraction,...}, b:{...}, fraction_delta, pairs:[{watch, trap,
 * a_share, b_share, delta, in}]}), and one self-contained HTML page.
 * Shares and deltas are fractions of monitored bytes (Eq. 2), delta B - A.
 */
#include "out_diff.h"

#include <inttypes.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include "json_escape.h"

int diff_format_from_name(const char *name, enum diff_format *out)
{
    static const char *const names[] = { "text", "json", "html" };
    for (int i = 0; i < 3; i++)
        if (!strcmp(name, names[i])) {
            *out = (enum diff_format)i;
            return 0;
        }
    return -1;
}

enum diff_format diff_format_for_file(const char *file)
{
    size_t n = file ? strlen(file) : 0;
    if (n > 5 && !strcmp(file + n - 5, ".json")) return DIFF_JSON;
    if (n > 5 && !strcmp(file + n - 5, ".html")) return DIFF_HTML;
    return DIFF_TEXT;
}

static const char *where(const diff_pair *p)
{
    return p->in_a && p->in_b ? "both" : p->in_a ? "a" : "b";
}

/* ---- text ---- */

static void text_side(FILE *f, const char *label, const char *name, const merge_model *m)
{
    fprintf(f, "  %s %-40s %7.2f%% %s, %6.2f%% approx, %" PRIu64 " bytes monitored, sampler %s\n",
            label, name, 100.0 * m->fraction, !strcmp(m->mode, "dead-store") ? "dead" : "silent",
            100.0 * m->approx_fraction, m->bytes, m->sampler);
}

static void text_frame_line(FILE *f, const merge_ctx *c)
{
    const merge_frame *fr = &c->frames[0];
    const char *file = strrchr(fr->file, '/');
    fprintf(f, "%s (%s:%" PRIu32 ")", fr->function, file ? file + 1 : fr->file, fr->line);
    if (c->nframes > 1) fprintf(f, " <- %s", c->frames[1].function);
}

static int text_write(FILE *f, const diff_model *d, size_t n)
{
    fprintf(f, "wasp diff: %s (B - A)\n", d->a->mode);
    text_side(f, "A", d->a_name, d->a);
    text_side(f, "B", d->b_name, d->b);
    fprintf(f, "  change        %+7.2f points (approx %+.2f)\n\n", 100.0 * d->fraction_delta,
            100.0 * d->approx_delta);
    fprintf(f, "Top %zu of %zu pairs by |change| (share of each run's monitored bytes):\n\n", n, d->npairs);
    fprintf(f, "  %8s %8s %8s  %-4s  pair\n", "A", "B", "change", "in");
    for (size_t i = 0; i < n; i++) {
        const diff_pair *p = &d->pairs[i];
        fprintf(f, "  %7.2f%% %7.2f%% %+7.2f  %-4s  ", 100.0 * p->a_share, 100.0 * p->b_share,
                100.0 * p->delta, where(p));
        text_frame_line(f, p->watch);
        fputs("  ->  ", f);
        text_frame_line(f, p->trap);
        fputc('\n', f);
    }
    return ferror(f) ? -1 : 0;
}

/* ---- JSON ---- */

static void json_side(FILE *f, const char *key, const char *name, const merge_model *m)
{
    fprintf(f, " \"%s\": {\"run\": ", key);
    json_escape_str(f, name);
    fputs(", \"sampler\": ", f);
    json_escape_str(f, m->sampler);
    fputs(", \"fraction\": ", f);
    json_num(f, m->fraction);
    fputs(", \"approx_fraction\": ", f);
    json_num(f, m->approx_fraction);
    fprintf(f, ", \"bytes\": %" PRIu64 ", \"wasteful_bytes\": %" PRIu64 ", \"pairs\": %zu},\n",
            m->bytes, m->wasteful_bytes, m->npairs);
}

static void json_ctx(FILE *f, const merge_ctx *c)
{
    fputs("{\"instruction\": ", f);
    json_escape_str(f, c->instruction);
    fputs(", \"frames\": [", f);
    for (size_t i = 0; i < c->nframes; i++) {
        fputs(i ? ", {\"function\": " : "{\"function\": ", f);
        json_escape_str(f, c->frames[i].function);
        fputs(", \"file\": ", f);
        json_escape_str(f, c->frames[i].file);
        fprintf(f, ", \"line\": %" PRIu32 "}", c->frames[i].line);
    }
    fputs("]}", f);
}

static int json_write(FILE *f, const diff_model *d, size_t n)
{
    fputs("{\"mode\": ", f);
    json_escape_str(f, d->a->mode);
    fputs(",\n", f);
    json_side(f, "a", d->a_name, d->a);
    json_side(f, "b", d->b_name, d->b);
    fputs(" \"fraction_delta\": ", f);
    json_num(f, d->fraction_delta);
    fputs(", \"approx_fraction_delta\": ", f);
    json_num(f, d->approx_delta);
    fprintf(f, ",\n \"pairs_total\": %zu,\n \"pairs\": [", d->npairs);
    for (size_t i = 0; i < n; i++) {
        const diff_pair *p = &d->pairs[i];
        fputs(i ? ",\n  {\"watch\": " : "\n  {\"watch\": ", f);
        json_ctx(f, p->watch);
        fputs(",\n   \"trap\": ", f);
        json_ctx(f, p->trap);
        fputs(",\n   \"a_share\": ", f);
        json_num(f, p->a_share);
        fputs(", \"b_share\": ", f);
        json_num(f, p->b_share);
        fputs(", \"delta\": ", f);
        json_num(f, p->delta);
        fprintf(f, ", \"in\": \"%s\"}", where(p));
    }
    fputs(n ? "\n ]}\n" : "]}\n", f);
    return ferror(f) ? -1 : 0;
}

/* ---- HTML ---- */

static void html_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static void html_ctx(FILE *f, const merge_ctx *c)
{
    for (size_t i = 0; i < c->nframes && i < 4; i++) {
        const char *file = strrchr(c->frames[i].file, '/');
        html_text(f, c->frames[i].function);
        fputs(" (", f);
        html_text(f, file ? file + 1 : c->frames[i].file);
        fprintf(f, ":%" PRIu32 ")", c->frames[i].line);
        if (i == 0 && c->instruction[0]) {
            fputs(" <code>", f);
            html_text(f, c->instruction);
            fputs("</code>", f);
        }
        fputs("<br>", f);
    }
}

static void html_side(FILE *f, const char *label, const char *name, const merge_model *m)
{
    fprintf(f, "<tr><th>%s</th><td>", label);
    html_text(f, name);
    fprintf(f, "</td><td>%.2f%%</td><td>%.2f%%</td><td>", 100.0 * m->fraction, 100.0 * m->approx_fraction);
    html_text(f, m->sampler);
    fprintf(f, "</td><td>%" PRIu64 "</td></tr>\n", m->bytes);
}

static int html_write(FILE *f, const diff_model *d, size_t n)
{
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>wasp diff</title><style>"
          "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
          "td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top;text-align:left}"
          ".up{color:#b00}.down{color:#070}code{font-size:90%}</style></head><body>\n", f);
    fputs("<h1>wasp diff: ", f);
    html_text(f, d->a->mode);
    fputs("</h1>\n<table><tr><th></th><th>run</th><th>fraction</th><th>approx</th><th>sampler</th>"
          "<th>bytes monitored</th></tr>\n", f);
    html_side(f, "A", d->a_name, d->a);
    html_side(f, "B", d->b_name, d->b);
    fprintf(f, "<tr><th>B - A</th><td></td><td class=\"%s\">%+.2f points</td><td>%+.2f points</td>"
            "<td></td><td></td></tr></table>\n", d->fraction_delta > 0 ? "up" : "down",
            100.0 * d->fraction_delta, 100.0 * d->approx_delta);
    fprintf(f, "<h2>Top %zu of %zu pairs by |change|</h2>\n<table><tr><th>A</th><th>B</th>"
            "<th>change</th><th>in</th><th>watch</th><th>trap</th></tr>\n", n, d->npairs);
    for (size_t i = 0; i < n; i++) {
        const diff_pair *p = &d->pairs[i];
        fprintf(f, "<tr><td>%.2f%%</td><td>%.2f%%</td><td class=\"%s\">%+.2f</td><td>%s</td><td>",
                100.0 * p->a_share, 100.0 * p->b_share, p->delta > 0 ? "up" : "down",
                100.0 * p->delta, where(p));
        html_ctx(f, p->watch);
        fputs("</td><td>", f);
        html_ctx(f, p->trap);
        fputs("</td></tr>\n", f);
    }
    fputs("</table></body></html>\n", f);
    return ferror(f) ? -1 : 0;
}

int diff_write(FILE *f, const diff_model *d, enum diff_format format, size_t top)
{
    size_t n = top && top < d->npairs ? top : d->npairs;
    switch (format) {
    case DIFF_JSON: return json_write(f, d, n);
    case DIFF_HTML: return html_write(f, d, n);
    default: return text_write(f, d, n);
    }
}

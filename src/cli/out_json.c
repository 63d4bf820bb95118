/*
 * out_json.c - writes the report model (merge.h) as JSON.
 *
 * Owns the JSON report: locale-independent shortest round-trip numbers (json_num)
 * (strings go through json_escape.c, valid, HTML-safe UTF-8 whatever bytes
 * a symbol name holds), and the document shape that tools and tests rely on:
 * {"mode", "totals", "pairs": [{"watch", "trap", ...}], "stats", ...}.
 */
#include "out_json.h"

#include "json_escape.h"

#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void json_frames(FILE *f, const merge_ctx *c)
{
    fputs("{\"instruction\": ", f);
    json_escape_str(f, c->instruction);
    fputs(", \"frames\": [", f);
    for (size_t i = 0; i < c->nframes; i++) {
        const merge_frame *fr = &c->frames[i];
        fputs(i ? ", {\"function\": " : "{\"function\": ", f);
        json_escape_str(f, fr->function);
        fputs(", \"file\": ", f);
        json_escape_str(f, fr->file);
        fprintf(f, ", \"line\": %" PRIu32 ", \"module\": ", fr->line);
        json_escape_str(f, fr->module);
        /* The leaf's address, as the instruction shown was seen. */
        if (i == 0) fprintf(f, ", \"pc\": \"0x%" PRIx64 "\"", c->pc);
        fputc('}', f);
    }
    fputs("]}", f);
}

static void json_pair(FILE *f, const merge_pair *q)
{
    fputs("  {\"fraction\": ", f);
    json_num(f, q->fraction);
    fputs(", \"approx_fraction\": ", f);
    json_num(f, q->approx_fraction);
    fprintf(f, ", \"bytes\": %" PRIu64 ", \"wasteful_bytes\": %" PRIu64
            ", \"approx_bytes\": %" PRIu64 ", \"count\": %" PRIu64 ",\n   \"watch\": ",
            q->bytes, q->wasteful_bytes, q->approx_bytes, q->count);
    json_frames(f, q->watch);
    fputs(",\n   \"trap\": ", f);
    json_frames(f, q->trap);
    fputc('}', f);
}

static void json_totals(FILE *f, const merge_model *m)
{
    fputs(" \"totals\": {\"fraction\": ", f);
    json_num(f, m->fraction);
    fputs(", \"approx_fraction\": ", f);
    json_num(f, m->approx_fraction);
    fputs(", \"fraction_ci95\": [", f);
    json_num(f, m->fraction_lo);
    fputs(", ", f);
    json_num(f, m->fraction_hi);
    fputs("]", f);
    if (m->npairs) {
        fprintf(f, ", \"heaviest_pair\": {\"rank\": %zu, \"count\": %" PRIu64 ", \"share\": ", m->heaviest + 1,
                m->pairs[m->heaviest].count);
        json_num(f, m->heaviest_share);
        fputs(", \"fraction_without\": ", f);
        json_num(f, m->fraction_without_heaviest);
        fprintf(f, ", \"decides\": %s}", merge_heaviest_decides(m) ? "true" : "false");
    }
    fprintf(f, ", \"bytes\": %" PRIu64 ", \"wasteful_bytes\": %" PRIu64
            ", \"approx_bytes\": %" PRIu64 ", \"count\": %" PRIu64 ", \"samples\": %" PRIu64
            ", \"armed\": %" PRIu64 ", \"traps\": %" PRIu64 ", \"handler_ns\": %" PRIu64 "},\n",
            m->bytes, m->wasteful_bytes, m->approx_bytes, m->count,
            merge_stat_value(m, "samples"), merge_stat_value(m, "armed"),
            merge_stat_value(m, "traps"),
            merge_stat_value(m, "sample_ns") + merge_stat_value(m, "trap_ns"));
}

/* Writes the stats whose names start with prefix (prefix stripped), or all
 * of them when prefix is "". */
static void json_stats(FILE *f, const char *key, const merge_model *m, const char *prefix)
{
    size_t plen = strlen(prefix), n = 0;
    fprintf(f, " \"%s\": {", key);
    for (size_t i = 0; i < m->nstats; i++) {
        if (strncmp(m->stats[i].name, prefix, plen) != 0) continue;
        fputs(n++ ? ", " : "", f);
        json_escape_str(f, m->stats[i].name + plen);
        fprintf(f, ": %" PRIu64, m->stats[i].value);
    }
    fputs("},\n", f);
}

static void json_header(FILE *f, const merge_model *m)
{
    fputs("{\"mode\": ", f);
    json_escape_str(f, m->mode);
    fputs(",\n \"sampler\": ", f);
    json_escape_str(f, m->sampler);
    if (m->interval_mixed) fputs(", \"interval\": null", f);
    else fprintf(f, ", \"interval\": %" PRIu64, m->interval);
    fputs(", \"fp_tolerance\": ", f);
    json_num(f, m->fp_tolerance);
    fputs(", \"watch_check\": ", f);
    json_escape_str(f, m->watch_check);
    char why[512];
    fputs(", \"watch_warning\": ", f);
    if (merge_watch_warning(m, why, sizeof why)) json_escape_str(f, why);
    else fputs("null", f);
    fprintf(f, ", \"processes\": %zu, \"threads\": %zu, \"duplicates\": %zu, "
            "\"checkpoint_threads\": %zu, \"checkpoint_oldest_ms\": ",
            m->nprocesses, m->nthreads, m->duplicates, m->checkpoints);
    if (m->checkpoints) fprintf(f, "%" PRIu64, m->checkpoint_oldest_ms);
    else fputs("null", f);
    fputs(", \"incomplete\": ", f);
    if (m->incomplete) json_escape_str(f, m->incomplete);
    else fputs("null", f);
    fputs(",\n", f);
}

void json_write_budget(FILE *f, const merge_budget *b)
{
    if (!b->nthreads) {
        fputs("null", f);
        return;
    }
    if (b->ppm_mixed) fputs("{\"percent\": null", f);
    else if (!b->ppm) fputs("{\"percent\": \"off\"", f);
    else {
        fputs("{\"percent\": ", f);
        json_num(f, (double)b->ppm / 1e4);
    }
    fputs(", \"overhead_max\": ", f);
    json_num(f, b->overhead_max);
    fprintf(f, ", \"overhead_max_tid\": %" PRId64 ", \"overhead_max_thread\": ", b->max_tid);
    json_escape_str(f, b->max_name);
    fprintf(f, ", \"overhead_max_cpu_ns\": %" PRIu64, b->max_cpu_ns);
    fputs(", \"overhead_median\": ", f);
    json_num(f, b->overhead_median);
    fputs(", \"overhead_all\": ", f);
    json_num(f, b->overhead_all);
    fprintf(f, ", \"threads\": %zu, \"threads_measured\": %zu, \"threads_cut\": %zu, \"cut\": %s"
            ", \"mean_interval\": %" PRIu64 ", \"interval_max\": %" PRIu64
            ", \"signal_cost_ns\": %" PRIu64 ", \"cpu_ns\": %" PRIu64 ", \"wasp_ns\": %" PRIu64
            ", \"clock_ns\": %" PRIu64 ", \"threads_clocked\": %zu, \"lifecycle_ns\": %" PRIu64
            ", \"checkpoint_ns\": %" PRIu64 ", \"switches\": %" PRIu64 ", \"switch_ns\": %" PRIu64
            ", \"switch_cost_ns\": %" PRIu64 ", \"switch_floor_ns\": %" PRIu64
            ", \"switch_armed_ns\": %" PRIu64
            ", \"measured_cpu_ns\": %" PRIu64 "}",
            b->nthreads, b->noverheads, b->threads_cut, b->threads_cut ? "true" : "false",
            b->mean_interval, b->interval_max, b->signal_cost_ns, b->cpu_ns, b->wasp_ns,
            b->clock_ns, b->nclocked, b->lifecycle_ns, b->checkpoint_ns, b->switches, b->switch_ns,
            b->switch_cost_ns, b->switch_floor_ns, b->switch_armed_ns, b->measured_cpu_ns);
}

int json_write_report(FILE *f, const merge_model *m, size_t top)
{
    size_t n = top && top < m->npairs ? top : m->npairs;
    json_header(f, m);
    json_totals(f, m);
    fputs(" \"budget\": ", f);
    json_write_budget(f, &m->budget);
    fputs(",\n", f);
    json_stats(f, "stats", m, "");
    json_stats(f, "drops", m, "drop.");
    fprintf(f, " \"pairs_total\": %zu,\n \"pairs\": [", m->npairs);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",\n" : "\n", f);
        json_pair(f, &m->pairs[i]);
    }
    fputs(n ? "\n ]}\n" : "]}\n", f);
    return ferror(f) ? -1 : 0;
}

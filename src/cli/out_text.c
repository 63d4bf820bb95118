/*
 * out_text.c - writes the report model (merge.h) for people to read.
 *
 * Owns the text layout, after JXPerf's Figure 7: a header that says how
 * much of the program is wasteful and how trustworthy the measurement is
 * (samples, traps, handler time, drops), then the top pairs, each with its
 * watch context C1 and the context C2 that made it wasteful, leaf first.
 */
#include "out_text.h"
#include "text_escape.h"

#include <inttypes.h>
#include <string.h>

static int text_has_approx(const char *mode)
{
    return strcmp(mode, "dead-store") != 0;
}

/* Writes s with control characters made visible, so a hostile symbol name
 * cannot drive the terminal. */
static void text_puts(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = text_printable_len(p);
        if (n) fwrite(p, 1, n, f);
        else if (*p == '\t') fputs("\\t", f);
        else if (*p == '\n') fputs("\\n", f);
        else fprintf(f, "\\x%02x", *p);
        p += n ? n : 1;
    }
}

static const char *text_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static void text_frame(FILE *f, const merge_frame *fr, const char *instruction)
{
    fputs("    ", f);
    text_puts(f, fr->function);
    fputs(" (", f);
    if (fr->file[0]) {
        text_puts(f, fr->file);
        if (fr->line) fprintf(f, ":%" PRIu32, fr->line);
    } else {
        text_puts(f, fr->module[0] ? text_basename(fr->module) : "?");
    }
    fputc(')', f);
    if (instruction && instruction[0]) {
        fputs("    ", f);
        text_puts(f, instruction);
    }
    fputc('\n', f);
}

static void text_ctx(FILE *f, const char *title, const merge_ctx *c)
{
    fprintf(f, "  %s:\n", title);
    for (size_t i = 0; i < c->nframes; i++)
        text_frame(f, &c->frames[i], i == 0 ? c->instruction : NULL);
}

static void text_pair(FILE *f, const merge_model *m, size_t rank, const merge_pair *q)
{
    char title[64];
    fprintf(f, "#%zu  %6.2f%%", rank, 100.0 * q->fraction);
    if (text_has_approx(m->mode)) fprintf(f, "  approx %6.2f%%", 100.0 * q->approx_fraction);
    fprintf(f, "  bytes %" PRIu64 "  count %" PRIu64 "\n", q->bytes, q->count);
    text_ctx(f, "watch", q->watch);
    snprintf(title, sizeof title, "%s (trap)", merge_relation(m->mode));
    text_ctx(f, title, q->trap);
    fputc('\n', f);
}

static void text_drops(FILE *f, const merge_model *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->nstats; i++) {
        const merge_stat *s = &m->stats[i];
        if (strncmp(s->name, "drop.", 5) != 0 || s->value == 0) continue;
        fputs(n++ ? ", " : "  drops:          ", f);
        text_puts(f, s->name + 5);
        fprintf(f, " %" PRIu64, s->value);
    }
    if (n) fputc('\n', f);
}

/* The checkpoint thread's work is wasp's overhead too, though on a thread
 * of its own; a thread's handler stands aside only for the copy. */
static void text_checkpoint_cost(FILE *f, const merge_model *m)
{
    uint64_t n = merge_stat_value(m, "checkpoints");
    if (!n) return;
    double each = (double)merge_stat_value(m, "checkpoint_ns") / (double)n;
    double pause = (double)merge_stat_value(m, "checkpoint_pause_ns") / (double)n;
    fprintf(f, "  checkpoints:    %" PRIu64 " written, %.3f ms CPU (%.3f ms each), handler paused "
            "%.1f \xc2\xb5s each, %" PRIu64 " signals skipped\n", n,
            (double)merge_stat_value(m, "checkpoint_ns") / 1e6, each / 1e6, pause / 1e3,
            merge_stat_value(m, "checkpoint_skipped"));
}

static void text_cost(FILE *f, const merge_model *m)
{
    uint64_t samples = merge_stat_value(m, "samples"), traps = merge_stat_value(m, "traps");
    uint64_t ns = merge_stat_value(m, "sample_ns") + merge_stat_value(m, "trap_ns");
    fprintf(f, "  samples:        %" PRIu64 ", armed %" PRIu64 ", traps %" PRIu64, samples,
            merge_stat_value(m, "armed"), traps);
    uint64_t at_target = merge_stat_value(m, "traps_at_target"), clobbered = merge_stat_value(m, "traps_clobbered");
    uint64_t partial = merge_stat_value(m, "traps_partial");
    if (at_target + clobbered + partial)
        fprintf(f, " (%" PRIu64 " before a branch target, %" PRIu64 " whose address the access overwrote, %" PRIu64
                " over part of a watch)", at_target, clobbered, partial);
    fputc('\n', f);
    fprintf(f, "  handler time:   %.3f ms", (double)ns / 1e6);
    if (samples + traps)
        fprintf(f, " (%.2f \xc2\xb5s/event)", (double)ns / 1e3 / (double)(samples + traps));
    fputc('\n', f);
    text_checkpoint_cost(f, m);
    text_drops(f, m);
}

/* An interval as people read it: a duration for the software sampler,
 * events for the PMU one. */
static void text_interval(FILE *f, const merge_model *m, uint64_t v)
{
    if (!merge_sampler_timed(m)) fprintf(f, "%" PRIu64 " events", v);
    else if (v >= 1000000) fprintf(f, "%.1f ms", (double)v / 1e6);
    else fprintf(f, "%.0f \xc2\xb5s", (double)v / 1e3);
}

/* Which thread the max is, and of how much CPU time. */
static void text_max_thread(FILE *f, const merge_budget *b)
{
    fprintf(f, "                  max: thread %" PRId64, b->max_tid);
    if (b->max_name[0]) {
        fputs(" \"", f);
        text_puts(f, b->max_name);
        fputc('"', f);
    }
    if (b->max_cpu_ns >= 1000000)
        fprintf(f, ", %.1f ms of CPU\n", (double)b->max_cpu_ns / 1e6);
    else
        fprintf(f, ", %.1f \xc2\xb5s of CPU\n", (double)b->max_cpu_ns / 1e3);
}

/* The overhead budget (merge_budget.h): what it was, what wasp cost the
 * threads by its own account, and whether it cut the sample rate. */
static void text_budget(FILE *f, const merge_model *m)
{
    const merge_budget *b = &m->budget;
    if (!b->nthreads) return;
    fputs("  budget:         ", f);
    if (b->ppm_mixed) fputs("varies by thread", f);
    else if (!b->ppm) fputs("off", f);
    else fprintf(f, "%g%% of each thread's CPU time", (double)b->ppm / 1e4);
    fputc('\n', f);
    const char *sw = b->switch_ns ? ", switches" : "", *ckpt = b->checkpoint_ns ? ", checkpoints" : "";
    if (b->nthreads == 1 && b->noverheads == 1)
        fprintf(f, "  est. overhead:  %.2f%% of the thread's CPU time (1 thread;\n"
                "                  handler time + %.1f \xc2\xb5s per signal%s%s)\n",
                100.0 * b->overhead_max, (double)b->signal_cost_ns / 1e3, sw, ckpt);
    else if (b->noverheads) {
        fprintf(f, "  est. overhead:  %.2f%% of all threads' CPU time; max %.2f%%, median %.2f%% of a\n"
                "                  thread's (%zu thread%s; handler time + %.1f \xc2\xb5s per signal%s%s)\n",
                100.0 * b->overhead_all, 100.0 * b->overhead_max, 100.0 * b->overhead_median, b->noverheads,
                b->noverheads == 1 ? "" : "s", (double)b->signal_cost_ns / 1e3, sw, ckpt);
        if (b->noverheads > 1)
            text_max_thread(f, b);
    }
    else if (b->measured_cpu_ns)
        fprintf(f, "  est. overhead:  %.2f%% of all threads' CPU time\n", 100.0 * b->overhead_all);
    if (b->lifecycle_ns && b->nthreads == 1)
        fprintf(f, "  thread costs:   %.1f ms in the thread's start and end, counted in est. overhead\n",
                (double)b->lifecycle_ns / 1e6);
    else if (b->lifecycle_ns)
        fprintf(f, "  thread costs:   %.1f ms in %zu threads' starts and ends (%.1f \xc2\xb5s a thread),\n"
                "                  counted in est. overhead\n", (double)b->lifecycle_ns / 1e6,
                b->nthreads, (double)b->lifecycle_ns / 1e3 / (double)b->nthreads);
    if (b->switch_ns && b->switches)
        fprintf(f, "  switch costs:   %.1f ms in %" PRIu64 " context switches (%.2f \xc2\xb5s each; measured:\n"
                "                  %.2f \xc2\xb5s + %.2f \xc2\xb5s per armed watch), counted in est. overhead\n",
                (double)b->switch_ns / 1e6, b->switches, (double)b->switch_ns / 1e3 / (double)b->switches,
                (double)b->switch_cost_ns / 1e3, (double)b->switch_armed_ns / 1e3);
    if (b->mean_interval) {
        fputs("  mean interval:  ", f);
        text_interval(f, m, b->mean_interval);
        if (!m->interval_mixed) {
            fputs(" (requested ", f);
            text_interval(f, m, m->interval);
            fputc(')', f);
        }
        fputc('\n', f);
    }
    double unsampled = m->interval_mixed ? 0 : merge_budget_unsampled(b, m->interval);
    if (unsampled >= 0.10)
        fprintf(f, "  note: %.0f%% of the CPU time gave no sample: the task clock samples user code\n"
                "        only, and a period that ends in the kernel (system calls, page faults) is lost.\n",
                100.0 * unsampled);
    if (b->threads_cut) {
        fprintf(f, "  note: the budget cut the sample rate in %zu of %zu thread%s (intervals up to ",
                b->threads_cut, b->nthreads, b->nthreads == 1 ? "" : "s");
        text_interval(f, m, b->interval_max);
        fputs("):\n        fewer samples than asked; --budget off or a larger budget keeps the rate.\n", f);
    }
    if (b->measured_cpu_ns && b->switch_ns * 100 >= b->measured_cpu_ns)
        fprintf(f, "  note: context switches cost %.1f%% of the threads' CPU time: wasp's sampler and\n"
                "        watches make every switch of a sampled thread dearer, and the budget cannot\n"
                "        cut that; fewer --slots cut the watches' part, and intervals under 10 ms cost more.\n",
                100.0 * (double)b->switch_ns / (double)b->measured_cpu_ns);
}

/* Samples in code whose function bounds neither an unwind table nor a
 * symbol table gives can take only the instruction at their pc, rarely an
 * access (the timer lands after the one that took the time): the report
 * would otherwise read as if that code did few accesses. */
/* A thread's context tree and pair table grow at each checkpoint; with
 * checkpoints off (or past their largest size) a full table drops every
 * sample of a context first seen after, and the report shows what ran
 * first. */
static void text_tables_full(FILE *f, const merge_model *m)
{
    uint64_t samples = merge_stat_value(m, "samples"), full = merge_stat_value(m, "drop.table_full");
    if (samples && full * 100 >= samples)
        fprintf(f, "  note: %.1f%% of the samples found their thread's tables full and were dropped:\n"
                "        contexts first seen late are missing. wasp grows the tables at each\n"
                "        checkpoint: keep --flush on (10s by default), or use a longer --interval.\n",
                100.0 * (double)full / (double)samples);
}

static void text_unplaced(FILE *f, const merge_model *m)
{
    uint64_t samples = merge_stat_value(m, "samples"), unplaced = merge_stat_value(m, "unplaced");
    if (samples && unplaced * 10 >= samples)
        fprintf(f, "  note: %.0f%% of the samples landed in code wasp could not place (no unwind table\n"
                "        and no symbol table names its functions: a stripped binary built without\n"
                "        unwind tables, or generated code); they could take only the instruction at\n"
                "        their pc, so that code's accesses are mostly missing from this report.\n"
                "        Keep the symbol table (do not strip) or build with unwind tables.\n",
                100.0 * (double)unplaced / (double)samples);
}

/* Below this many counted pairs the 95% interval is wider than about ±10
 * points, and the report says what to do about it. */
#define TEXT_FEW_PAIRS 100

/* The exact mode watches every access: no sampling error, no handler
 * cost, but possibly a cut run (--exact-limit). */
static void text_exact(FILE *f, const merge_model *m)
{
    fprintf(f, "  sampler:        exact (every access, under Valgrind)\n");
    fprintf(f, "  accesses:       %" PRIu64 " of the monitored kind, %" PRIu64 " pairs",
            merge_stat_value(m, "samples"), merge_stat_value(m, "traps"));
    if (merge_stat_value(m, "exact_contexts"))
        fprintf(f, ", %" PRIu64 " calling contexts", merge_stat_value(m, "exact_contexts"));
    fputc('\n', f);
    text_drops(f, m);
    if (merge_stat_value(m, "drop.table_full"))
        fprintf(f, "  note: %" PRIu64 " accesses ran in calling contexts past the exact mode's table:\n"
                "        their pairs are counted (fractions are exact) under one pair, not named.\n",
                merge_stat_value(m, "drop.table_full"));
    if (merge_stat_value(m, "exact_cut"))
        fprintf(f, "  note: --exact-limit stopped the program after %" PRIu64 " instructions:\n"
                "        these fractions are of the run up to there.\n",
                merge_stat_value(m, "exact_instructions"));
}

/* How the software sampler chose its accesses, and what the code
 * breakpoints that take a chosen access cost (decode_choose.c). */
static void text_choice(FILE *f, const merge_model *m)
{
    if (!merge_sampler_timed(m))
        return;
    fprintf(f, "  choice:         each access of a straight-line region equally likely per run of it;\n"
            "                  across regions by time, each pair times its region's accesses per\n"
            "                  instruction (code slower per instruction still weighs more per access);\n"
            "                  %" PRIu64 " samples waited at a code breakpoint for their access (%" PRIu64
            " whose pair had\n"
            "                  ended before the sample, %" PRIu64 " behind a branch target), %" PRIu64
            " reached it;\n"
            "                  %" PRIu64 " guarded an access past a branch or target, %" PRIu64
            " of them found it\n"
            "                  skipped (%" PRIu64 " found no slot for the guard); %" PRIu64
            " in loop bodies took\n"
            "                  the access's run on the next pass\n",
            merge_stat_value(m, "code_breaks"), merge_stat_value(m, "touched_behind"),
            merge_stat_value(m, "past_target"), merge_stat_value(m, "code_hits"), merge_stat_value(m, "guards"),
            merge_stat_value(m, "drop.skipped_ahead") + merge_stat_value(m, "drop.skipped_behind"),
            merge_stat_value(m, "guard_declined"), merge_stat_value(m, "next_pass"));
    uint64_t weighted = merge_stat_value(m, "weighted_pairs");
    if (weighted)
        fprintf(f, "                  pairs weighted by their watch's survival: %" PRIu64
                " found stand for %" PRIu64 " samples\n", m->count, weighted);
}

static void text_header(FILE *f, const merge_model *m)
{
    int exact = !strcmp(m->sampler, "exact");
    fprintf(f, "wasp report: %s\n", m->mode);
    fprintf(f, "  program:        %.2f%% %s", 100.0 * m->fraction,
            !strcmp(m->mode, "dead-store") ? "dead" : "precisely silent");
    if (text_has_approx(m->mode))
        fprintf(f, ", %.2f%% approximately silent (tolerance %g)", 100.0 * m->approx_fraction,
                m->fp_tolerance);
    fprintf(f, "\n                  of %" PRIu64 " bytes monitored, %" PRIu64
            " wasteful (Eq. 1)\n", m->bytes, m->wasteful_bytes);
    if (!exact)
        fprintf(f, "                  sampling error: %.1f%% to %.1f%% (95%%, %" PRIu64 " pairs counted)\n",
                100.0 * m->fraction_lo, 100.0 * m->fraction_hi, m->count);
    uint64_t folded = merge_stat_value(m, "threads_folded");
    fprintf(f, "  threads:        %zu in %zu process%s", m->nthreads, m->nprocesses,
            m->nprocesses == 1 ? "" : "es");
    if (folded)
        fprintf(f, "; %" PRIu64 " ended with no pair (counted, no file each)", folded);
    fputc('\n', f);
    if (merge_stat_value(m, "attached"))
        fprintf(f, "  attached:       started in a running JVM (wasp attach); %" PRIu64
                " of its threads were running already\n", merge_stat_value(m, "preexisting"));
    if (m->incomplete) {
        fputs("  incomplete:     ", f);
        text_puts(f, m->incomplete);
        fputc('\n', f);
    }
    if (m->checkpoints) {
        char when[64];
        fprintf(f, "  partial:        %zu of %zu threads from checkpoints (the program did not end\n"
                "                  normally: killed or crashed?); their data ends at their last\n"
                "                  checkpoint, the oldest taken %s\n",
                m->checkpoints, m->nthreads, merge_checkpoint_time(m, when, sizeof when));
    }
    if (exact) {
        text_exact(f, m);
        return;
    }
    fprintf(f, "  sampler:        %s", m->sampler);
    if (m->interval_mixed) fputs(", interval varies by thread", f);
    else if (merge_sampler_timed(m)) fprintf(f, ", every %" PRIu64 " ns", m->interval);
    else fprintf(f, ", every %" PRIu64 " events", m->interval);
    fputc('\n', f);
    fprintf(f, "  watch check:    %s\n", m->watch_check);
    text_cost(f, m);
    text_budget(f, m);
    text_choice(f, m);
    char why[512];
    if (merge_watch_warning(m, why, sizeof why))
        fprintf(f, "  warning: %s\n", why);
    uint64_t lost = merge_stat_value(m, "sigtrap_lost");
    if (lost)
        fprintf(f, "  warning: sampling stopped early in %" PRIu64 " thread%s: the program took SIGTRAP\n"
                "        from wasp (a raw rt_sigaction system call?); their data ends at their last sample.\n",
                lost, lost == 1 ? "" : "s");
    if (merge_heaviest_decides(m)) {
        const merge_pair *h = &m->pairs[m->heaviest];
        char found[32];
        if (h->count == 1) snprintf(found, sizeof found, "once");
        else snprintf(found, sizeof found, "%" PRIu64 " times", h->count);
        fprintf(f, "  note: one pair (#%zu, found %s) holds %.0f%% of the monitored bytes;\n"
                "        without it the program reads %.2f%%. Its watch outlived many samples and\n"
                "        stands for all of them: run longer or repeat the run before trusting either.\n",
                m->heaviest + 1, found, 100.0 * m->heaviest_share, 100.0 * m->fraction_without_heaviest);
    }
    text_unplaced(f, m);
    text_tables_full(f, m);
    if (m->count < TEXT_FEW_PAIRS)
        fprintf(f, "  note: only %" PRIu64 " pairs counted: for a closer estimate run longer or\n"
                "        sample more often (--interval 1ms, or 500us for short programs).\n", m->count);
}

int text_write_report(FILE *f, const merge_model *m, size_t top)
{
    size_t n = top && top < m->npairs ? top : m->npairs;
    text_header(f, m);
    fputc('\n', f);
    if (m->npairs == 0) {
        fputs("No pairs: no watchpoint trapped during the run.\n", f);
    } else {
        fprintf(f, "Top %zu of %zu pairs (share of all monitored bytes, Eq. 2):\n\n", n,
                m->npairs);
        for (size_t i = 0; i < n; i++) text_pair(f, m, i + 1, &m->pairs[i]);
    }
    return ferror(f) ? -1 : 0;
}

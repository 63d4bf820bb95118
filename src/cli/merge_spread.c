/*
 * merge_spread.c - how far a run's program fraction may be from the truth
 * by chance: the sampling interval over the pairs' effective number, and
 * the one pair that may decide the fraction on its own (a watch that
 * outlived many samples stands for all of them: watch.h). The bias of
 * time-weighted sampling across code of different speed is not here; no
 * count of pairs shows it (docs/accuracy.md).
 */
#include "merge_internal.h"

#include <math.h>
#include <string.h>

/* 95% Wilson score interval of a proportion p seen over n trials: how far
 * sampling alone may have moved the program fraction. Each counted pair is
 * taken as one trial, which is exact when all watches have the same width
 * (and ignores the time-weighting bias, which no count can cure). */
static void wilson_interval(double p, uint64_t n, double *lo, double *hi)
{
    const double z = 1.96, z2 = z * z;
    if (n == 0) {
        *lo = 0, *hi = 1;
        return;
    }
    double d = 1 + z2 / (double)n;
    double centre = (p + z2 / (2.0 * (double)n)) / d;
    double half = z * sqrt(p * (1 - p) / (double)n + z2 / (4.0 * (double)n * (double)n)) / d;
    *lo = centre - half < 0 ? 0 : centre - half;
    *hi = centre + half > 1 ? 1 : centre + half;
}

/* Pairs weighted by their watches' survival (watch.h) and their regions'
 * access rates (monitor.c) are fewer trials than their count: Kish's
 * effective count (sum w)^2 / sum w^2. Profiles from before the rates
 * carry only the survival weights. */
static uint64_t effective_count(const merge_model *m)
{
    int rated = merge_stat_value(m, "rate_weights") > 0;
    double w = (double)merge_stat_value(m, rated ? "rate_weights" : "weighted_pairs"),
           w2 = (double)merge_stat_value(m, rated ? "rate_weight_squares" : "weight_squares");
    if (w <= 0 || w2 <= 0)
        return m->count;
    double n = w * w / w2;
    return n < (double)m->count ? (uint64_t)n : m->count;
}

/* The heaviest pair by bytes and what the fraction reads without it. */
static void find_heaviest(merge_model *m)
{
    size_t h = 0;
    for (size_t i = 1; i < m->npairs; i++)
        if (m->pairs[i].bytes > m->pairs[h].bytes)
            h = i;
    m->heaviest = h;
    m->heaviest_share = m->npairs ? merge_ratio(m->pairs[h].bytes, m->bytes) : 0;
    m->fraction_without_heaviest = m->npairs && m->bytes > m->pairs[h].bytes
        ? merge_ratio(m->wasteful_bytes - m->pairs[h].wasteful_bytes, m->bytes - m->pairs[h].bytes) : m->fraction;
}

int merge_heaviest_decides(const merge_model *m)
{
    if (m->npairs < 2 || !m->count || !strcmp(m->sampler, "exact"))
        return 0;   /* the exact mode pairs every access: no weights */
    double found = (double)m->pairs[m->heaviest].count / (double)m->count;
    return m->heaviest_share >= 0.25 && fabs(m->fraction_without_heaviest - m->fraction) >= 0.05 &&
           8 * found < m->heaviest_share;
}

void merge_spread_finish(merge_model *m)
{
    wilson_interval(m->fraction, effective_count(m), &m->fraction_lo, &m->fraction_hi);
    find_heaviest(m);
}

/*
 * test_watch.c - reservoir replacement (paper §5.2) and watch placement.
 */
#include <math.h>
#include "harness.h"
#include "watch.h"

/* Offers k samples to a set with no traps; returns which sample (0..k-1)
 * each slot holds at the end, by tagging slots with the sample number. */
static void offer(watch_set *w, int k, int *holder)
{
    for (int s = 0; s < k; s++) {
        int i = watch_pick(w);
        if (i >= 0) {
            w->slot[i].armed = 1;
            holder[i] = s;
        }
    }
}

/* With one slot and k samples, every sample must survive with probability
 * 1/k. Chi-square over 20000 trials, k = 10 (9 degrees of freedom): the
 * 99.9% critical value is 27.9. */
TEST(reservoir_one_slot_is_uniform)
{
    enum { K = 10, TRIALS = 20000 };
    int counts[K] = { 0 };
    watch_set w;
    for (int t = 0; t < TRIALS; t++) {
        int holder[OPTIONS_MAX_SLOTS] = { -1, -1, -1, -1 };
        watch_init(&w, 1, 0x1234567ULL + (uint64_t)t * 7919);
        offer(&w, K, holder);
        CHECK(holder[0] >= 0 && holder[0] < K);
        if (holder[0] >= 0)
            counts[holder[0]]++;
    }
    double expected = TRIALS / (double)K, chi2 = 0;
    for (int i = 0; i < K; i++)
        chi2 += (counts[i] - expected) * (counts[i] - expected) / expected;
    CHECK(chi2 < 27.9);
}

/* With four slots and many samples, each sample's chance to be monitored
 * must not depend on its age: compare the first and last quarters. */
TEST(reservoir_four_slots_has_no_temporal_bias)
{
    enum { K = 40, TRIALS = 20000 };
    long kept[K] = { 0 };
    watch_set w;
    for (int t = 0; t < TRIALS; t++) {
        int holder[OPTIONS_MAX_SLOTS] = { -1, -1, -1, -1 };
        watch_init(&w, 4, 0xABCDEFULL + (uint64_t)t * 104729);
        offer(&w, K, holder);
        for (int i = 0; i < 4; i++)
            if (holder[i] >= 0)
                kept[holder[i]]++;
    }
    long early = 0, late = 0;
    for (int i = 0; i < K / 4; i++) {
        early += kept[i];
        late += kept[K - 1 - i];
    }
    /* Both quarters hold ~1/4 of the 4*TRIALS monitored samples. */
    double ratio = (double)early / (double)late;
    CHECK(ratio > 0.9 && ratio < 1.1);
    /* Replace-the-oldest would keep none of the early samples. */
    CHECK(early > TRIALS / 2);
}

TEST(free_slot_is_taken_first_and_release_restarts_the_reservoir)
{
    watch_set w;
    watch_init(&w, 2, 42);
    int a = watch_pick(&w);
    w.slot[a].armed = 1;
    int b = watch_pick(&w);
    CHECK(a != b && b >= 0);
    w.slot[b].armed = 1;
    CHECK_EQ_U(w.slot[a].seen, 2);   /* slot a counted the second sample */
    watch_release(&w, a);
    CHECK_EQ_U(w.slot[a].seen, 0);
    CHECK_EQ_U(watch_pick(&w), a);   /* the freed slot takes the next one */
}

TEST(fit_picks_largest_aligned_block_inside_access)
{
    uint64_t a;
    uint32_t len;
    CHECK(watch_fit(0x1000, 8, 0, &a, &len) == 0);
    CHECK_EQ_U(a, 0x1000); CHECK_EQ_U(len, 8);
    CHECK(watch_fit(0x1004, 4, 0, &a, &len) == 0);
    CHECK_EQ_U(a, 0x1004); CHECK_EQ_U(len, 4);
    CHECK(watch_fit(0x1001, 8, 0, &a, &len) == 0);      /* unaligned 8: 4 bytes at 0x1004 */
    CHECK_EQ_U(a, 0x1004); CHECK_EQ_U(len, 4);
    CHECK(watch_fit(0x1008, 32, 0, &a, &len) == 0);     /* vector store, draw 0: its first 8 bytes */
    CHECK_EQ_U(a, 0x1008); CHECK_EQ_U(len, 8);
    CHECK(watch_fit(0x1003, 1, 0, &a, &len) == 0);
    CHECK_EQ_U(a, 0x1003); CHECK_EQ_U(len, 1);
    CHECK(watch_fit(0x1003, 2, 0, &a, &len) == 0);      /* straddles: 1 byte inside */
    CHECK_EQ_U(len, 1);
    CHECK(watch_fit(0x1000, 0, 0, &a, &len) < 0);
}

TEST(fit_draws_among_a_wide_access_blocks)
{
    uint64_t a;
    uint32_t len;
    for (uint64_t draw = 0; draw < 8; draw++) {   /* a 32-byte store: 4 blocks, each in turn */
        CHECK(watch_fit(0x1008, 32, draw, &a, &len) == 0);
        CHECK_EQ_U(a, 0x1008 + (draw % 4) * 8); CHECK_EQ_U(len, 8);
    }
    CHECK(watch_fit(0x1004, 16, 1, &a, &len) == 0);  /* unaligned 16: one whole 8-byte block inside */
    CHECK_EQ_U(a, 0x1008); CHECK_EQ_U(len, 8);
    CHECK(watch_fit(0x1003, 2, 1, &a, &len) == 0);   /* straddles: either byte */
    CHECK_EQ_U(a, 0x1004); CHECK_EQ_U(len, 1);
}

TEST(a_limit_keeps_free_slots_free)
{
    watch_set w;
    watch_init(&w, 4, 7);
    /* Two of four allowed: the first two samples take free slots, later
     * ones may only replace them. */
    int a = watch_pick_within(&w, 2);
    w.slot[a].armed = 1;
    int b = watch_pick_within(&w, 2);
    w.slot[b].armed = 1;
    CHECK(a != b);
    for (int i = 0; i < 1000; i++) {
        int c = watch_pick_within(&w, 2);
        CHECK(c == -1 || c == a || c == b);
    }
    /* Raised again (the thread is back under its budget): a free slot. */
    int c = watch_pick_within(&w, 3);
    CHECK(c != a && c != b && c >= 0);
    CHECK(!w.slot[c].armed);
    /* 0 means no limit. */
    w.slot[c].armed = 1;
    int d = watch_pick_within(&w, 0);
    CHECK(d >= 0 && !w.slot[d].armed);
}

/* With one slot a watch's weight is the samples its slot has been offered:
 * it survived each later one with chance (seen-1)/seen. */
TEST(weight_with_one_slot_is_the_samples_offered)
{
    watch_set w;
    watch_init(&w, 1, 42);
    for (int s = 0; s < 50; s++) {
        int i = watch_pick(&w);
        if (i >= 0) {
            w.slot[i].armed = 1;
            w.slot[i].weight = w.pick_weight;
        }
        CHECK(fabs(w.slot[0].weight - (double)w.slot[0].seen) < 1e-9);
    }
}

/* Horvitz-Thompson: over many runs, a sample's weight times "its watch is
 * still armed D samples later" averages 1, whichever sample and however
 * many slots (3 of them here, visited in random order). Without weights
 * the average is the survival chance itself (well below 1). 40000 runs:
 * the mean is within 4% of 1. */
TEST(weights_make_a_watch_count_as_the_samples_it_stands_for)
{
    enum { SLOTS = 3, WARM = 7, D = 12, RUNS = 40000 };
    double sum = 0;
    int alive = 0;
    for (int run = 0; run < RUNS; run++) {
        watch_set w;
        watch_init(&w, SLOTS, 0x9E3779B97F4A7C15ULL ^ (uint64_t)(run + 1) * 2654435761u);
        int tracked = -1;
        for (int s = 0; s <= WARM + D; s++) {
            int i = watch_pick(&w);
            if (i < 0)
                continue;
            w.slot[i].armed = 1;
            w.slot[i].weight = w.pick_weight;
            if (i == tracked)
                tracked = -1;              /* replaced */
            if (s == WARM)
                tracked = i;               /* the sample followed */
        }
        if (tracked >= 0) {
            sum += w.slot[tracked].weight;
            alive++;
        }
    }
    double mean = sum / RUNS;
    CHECK(alive > RUNS / 20 && alive < RUNS / 2);   /* survival is far from certain */
    CHECK(fabs(mean - 1.0) < 0.04);
}

int main(void)
{
    RUN(a_limit_keeps_free_slots_free);
    RUN(reservoir_one_slot_is_uniform);
    RUN(reservoir_four_slots_has_no_temporal_bias);
    RUN(free_slot_is_taken_first_and_release_restarts_the_reservoir);
    RUN(fit_picks_largest_aligned_block_inside_access);
    RUN(fit_draws_among_a_wide_access_blocks);
    RUN(weight_with_one_slot_is_the_samples_offered);
    RUN(weights_make_a_watch_count_as_the_samples_it_stands_for);
    return HARNESS_EXIT();
}

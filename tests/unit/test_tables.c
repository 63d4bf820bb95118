/*
 * test_tables.c - the calling context tree and the pair table.
 */
#include "cct.h"
#include "harness.h"
#include "pairs.h"

TEST(cct_shares_prefixes_and_returns_paths_leaf_first)
{
    cct t;
    frame_key a[3] = { { 30, 0 }, { 20, 0 }, { 10, 0 } };   /* leaf 30, called from 20, from 10 */
    frame_key b[3] = { { 31, 0 }, { 20, 0 }, { 10, 0 } };
    frame_key out[8];
    CHECK(cct_init(&t, 1 << 8) == 0);
    uint32_t na = cct_intern(&t, a, 3), nb = cct_intern(&t, b, 3);
    CHECK(na && nb && na != nb);
    CHECK_EQ_U(cct_intern(&t, a, 3), na);
    CHECK_EQ_U(t.used, 1 + 4);          /* root + 10, 20, 30, 31 */
    CHECK_EQ_U(cct_path(&t, nb, out, 8), 3);
    CHECK_EQ_U(out[0].id, 31);
    CHECK_EQ_U(out[2].id, 10);
    frame_key java[1] = { { 30, 7 } };  /* same id, other aux: another frame */
    CHECK(cct_intern(&t, java, 1) != cct_intern(&t, a, 1));
    cct_destroy(&t);
}

TEST(cct_refuses_when_full)
{
    cct t;
    frame_key f[4] = { { 1, 0 }, { 2, 0 }, { 3, 0 }, { 4, 0 } };
    CHECK(cct_init(&t, 4) == 0);        /* root + 3 nodes */
    CHECK_EQ_U(cct_intern(&t, f, 4), 0);
    CHECK(cct_intern(&t, f + 1, 3) != 0);
    cct_destroy(&t);
}

TEST(pairs_accumulate_and_refuse_when_full)
{
    pair_table p;
    CHECK(pairs_init(&p, 8) == 0);
    CHECK(pairs_add(&p, 1, 2, 4, 4, 0) == 0);
    CHECK(pairs_add(&p, 1, 2, 4, 0, 4) == 0);
    CHECK(pairs_add(&p, 2, 1, 8, 0, 0) == 0);
    CHECK_EQ_U(p.used, 2);
    uint64_t count = 0, bytes = 0, wasteful = 0, approx = 0;
    for (uint32_t i = 0; i < p.cap; i++) {
        if (p.entries[i].watch_ctx == 1 && p.entries[i].trap_ctx == 2) {
            count = p.entries[i].count;
            bytes = p.entries[i].bytes;
            wasteful = p.entries[i].wasteful;
            approx = p.entries[i].approx;
        }
    }
    CHECK_EQ_U(count, 2);
    CHECK_EQ_U(bytes, 8);
    CHECK_EQ_U(wasteful, 4);
    CHECK_EQ_U(approx, 4);
    int refused = 0;
    for (uint32_t c = 10; c < 30; c++)
        refused += pairs_add(&p, c, c, 1, 0, 0) < 0;
    CHECK(refused > 0);
    CHECK(p.used <= 6);                 /* a quarter stays free */
    pairs_destroy(&p);
}

/* A full tree moved into one twice its size: every path keeps its id,
 * lookups find them through the rebuilt buckets, and new paths fit. */
TEST(cct_moved_keeps_ids_and_takes_more)
{
    cct t, bigger;
    frame_key path[2], out[4];
    uint32_t id[64];
    CHECK(cct_init(&t, 64) == 0);
    for (uint32_t i = 0; i < 31; i++) {                 /* 31 paths of 2 frames: 62 nodes + root */
        path[0] = (frame_key){ 1000 + i, 0 };
        path[1] = (frame_key){ 10 + i, i };
        id[i] = cct_intern(&t, path, 2);
        CHECK(id[i] != 0);
    }
    path[0] = (frame_key){ 5000, 0 };
    path[1] = (frame_key){ 6000, 0 };
    CHECK_EQ_U(cct_intern(&t, path, 2), 0);            /* full (6000 got the last node) */
    CHECK(cct_half_full(&t));
    uint32_t used = t.used;
    CHECK(cct_init(&bigger, 128) == 0);
    cct_move(&t, &bigger);
    cct_destroy(&bigger);                               /* the old one */
    CHECK_EQ_U(t.cap, 128);
    for (uint32_t i = 0; i < 31; i++) {
        path[0] = (frame_key){ 1000 + i, 0 };
        path[1] = (frame_key){ 10 + i, i };
        CHECK_EQ_U(cct_intern(&t, path, 2), id[i]);
        CHECK_EQ_U(cct_path(&t, id[i], out, 4), 2);
        CHECK_EQ_U(out[0].id, 1000 + i);
    }
    CHECK_EQ_U(t.used, used);                           /* nothing interned twice */
    path[0] = (frame_key){ 5000, 0 };
    path[1] = (frame_key){ 6000, 0 };
    CHECK_EQ_U(cct_intern(&t, path, 2), used);         /* 6000 found, 5000 new */
    cct_destroy(&t);
}

TEST(pairs_moved_keep_their_sums_and_take_more)
{
    pair_table p, bigger;
    CHECK(pairs_init(&p, 8) == 0);
    for (uint32_t c = 1; c <= 6; c++)
        CHECK(pairs_add(&p, c, c + 1, c, 1, 0) == 0);
    CHECK(pairs_add(&p, 40, 41, 1, 0, 0) < 0);          /* full */
    CHECK(pairs_half_full(&p));
    CHECK(pairs_init(&bigger, 16) == 0);
    pairs_move(&p, &bigger);
    pairs_destroy(&bigger);
    CHECK_EQ_U(p.used, 6);
    for (uint32_t c = 1; c <= 6; c++)                   /* found again, not added anew */
        CHECK(pairs_add(&p, c, c + 1, c, 1, 0) == 0);
    CHECK_EQ_U(p.used, 6);
    for (uint32_t j = 0; j < 6; j++) {
        CHECK_EQ_U(p.entries[j].count, 2);
        CHECK_EQ_U(p.entries[j].bytes, 2 * (j + 1));
    }
    CHECK(pairs_add(&p, 40, 41, 1, 0, 0) == 0);
    CHECK_EQ_U(p.used, 7);
    pairs_destroy(&p);
}

int main(void)
{
    RUN(cct_shares_prefixes_and_returns_paths_leaf_first);
    RUN(cct_refuses_when_full);
    RUN(pairs_accumulate_and_refuse_when_full);
    RUN(cct_moved_keeps_ids_and_takes_more);
    RUN(pairs_moved_keep_their_sums_and_take_more);
    return HARNESS_EXIT();
}

/*
 * test_detect.c - the paper's §4 definitions as the detector applies them.
 */
#include <string.h>
#include "access.h"
#include "detect.h"
#include "harness.h"

static watch_slot slot_with(uint64_t value, uint32_t len, uint8_t fp)
{
    watch_slot w;
    memset(&w, 0, sizeof(w));
    w.armed = 1;
    w.value = value;
    w.len = len;
    w.fp = fp;
    w.pending = watch_bytes_mask(len);
    return w;
}

/* An access over all of a watch's bytes. */
static uint8_t all(const watch_slot *w)
{
    return watch_bytes_mask(w->len);
}

static uint64_t bits_of_double(double d)
{
    uint64_t v;
    memcpy(&v, &d, 8);
    return v;
}

static uint64_t two_floats(float a, float b)
{
    float f[2] = { a, b };
    uint64_t v;
    memcpy(&v, f, 8);
    return v;
}

TEST(dead_store_is_store_after_store)
{
    watch_slot w = slot_with(5, 4, ACCESS_INT);
    detect_result r = detect_on_trap(MODE_DEAD_STORE, &w, ACCESS_STORE, all(&w), 9, 0.01);
    CHECK(r.record && !r.keep_watching);
    CHECK_EQ_U(r.bytes, 4);
    CHECK_EQ_U(r.wasteful, 4);
    r = detect_on_trap(MODE_DEAD_STORE, &w, ACCESS_LOAD, all(&w), 5, 0.01);
    CHECK(r.record);
    CHECK_EQ_U(r.wasteful, 0);
    r = detect_on_trap(MODE_DEAD_STORE, &w, ACCESS_RMW, all(&w), 6, 0.01);   /* reads first: not dead */
    CHECK_EQ_U(r.wasteful, 0);
}

/* Each byte pairs with its own next access, as the exact mode pairs them. */
TEST(a_narrower_access_ends_only_the_pairs_of_the_bytes_it_touched)
{
    watch_slot w = slot_with(0, 8, ACCESS_INT);   /* an 8-byte zeroing store */
    detect_result r = detect_on_trap(MODE_DEAD_STORE, &w, ACCESS_STORE, 0x0f, 7, 0.01);
    CHECK(r.record && r.keep_watching);
    CHECK_EQ_U(r.ended, 0x0f);
    CHECK_EQ_U(r.bytes, 4);      /* the 4-byte field store ended half */
    CHECK_EQ_U(r.wasteful, 4);
    w.pending = 0xf0;            /* monitor.c: what is left */
    r = detect_on_trap(MODE_DEAD_STORE, &w, ACCESS_STORE, 0x0f, 7, 0.01);
    CHECK(!r.record && r.keep_watching);   /* bytes already ended: nothing new */
    r = detect_on_trap(MODE_DEAD_STORE, &w, ACCESS_LOAD, 0xff, 7, 0.01);
    CHECK(r.record && !r.keep_watching);   /* the rest read: live */
    CHECK_EQ_U(r.bytes, 4);
    CHECK_EQ_U(r.wasteful, 0);
}

/* The bytes a narrower store left alone still hold the old value: they must
 * not make it silent (one 8-byte pair read 8 silent bytes here). */
TEST(a_silent_store_over_half_a_watch_is_silent_in_that_half_only)
{
    watch_slot w = slot_with(0x1111111122222222ull, 8, ACCESS_INT);
    detect_result r = detect_on_trap(MODE_SILENT_STORE, &w, ACCESS_STORE, 0x0f, 0x1111111122222222ull, 0.01);
    CHECK(r.record && r.keep_watching && r.bytes == 4 && r.wasteful == 4);
    w.pending = 0xf0;
    r = detect_on_trap(MODE_SILENT_STORE, &w, ACCESS_STORE, 0xf0, 0x3333333322222222ull, 0.01);
    CHECK(r.record && !r.keep_watching && r.bytes == 4 && r.wasteful == 0);
    /* An FP element only half ended cannot be compared as FP. */
    watch_slot d = slot_with(bits_of_double(100.0), 8, ACCESS_F64);
    r = detect_on_trap(MODE_SILENT_STORE, &d, ACCESS_STORE, 0x0f, bits_of_double(100.0) ^ 1, 0.5);
    CHECK(r.wasteful == 0 && r.approx == 0);
    watch_slot f = slot_with(two_floats(1.0f, 5.0f), 8, ACCESS_F32);
    r = detect_on_trap(MODE_SILENT_STORE, &f, ACCESS_STORE, 0x0f, two_floats(1.001f, 9.0f), 0.01);
    CHECK(r.bytes == 4 && r.approx == 4);  /* the second float is not ended here */
}

TEST(silent_store_compares_integers_exactly)
{
    watch_slot w = slot_with(0x1234, 8, ACCESS_INT);
    detect_result r = detect_on_trap(MODE_SILENT_STORE, &w, ACCESS_STORE, all(&w), 0x1234, 0.01);
    CHECK_EQ_U(r.wasteful, 8);
    CHECK_EQ_U(r.approx, 0);
    r = detect_on_trap(MODE_SILENT_STORE, &w, ACCESS_STORE, all(&w), 0x1235, 0.5);
    CHECK_EQ_U(r.wasteful, 0);
    CHECK_EQ_U(r.approx, 0);   /* tolerance never applies to integers */
}

TEST(silent_store_fp_is_approximate_within_tolerance)
{
    watch_slot w = slot_with(bits_of_double(100.0), 8, ACCESS_F64);
    detect_result r = detect_on_trap(MODE_SILENT_STORE, &w, ACCESS_STORE, all(&w), bits_of_double(100.5), 0.01);
    CHECK_EQ_U(r.wasteful, 0);
    CHECK_EQ_U(r.approx, 8);
    r = detect_on_trap(MODE_SILENT_STORE, &w, ACCESS_STORE, all(&w), bits_of_double(102.0), 0.01);
    CHECK_EQ_U(r.approx, 0);
    r = detect_on_trap(MODE_SILENT_STORE, &w, ACCESS_STORE, all(&w), bits_of_double(100.0), 0.01);
    CHECK_EQ_U(r.wasteful, 8);   /* identical FP values are precise */
    CHECK_EQ_U(r.approx, 0);
}

TEST(fp_elements_are_compared_one_by_one)
{
    watch_slot w = slot_with(two_floats(1.0f, 1000.0f), 8, ACCESS_F32);
    detect_result r = detect_on_trap(MODE_SILENT_STORE, &w, ACCESS_STORE, all(&w), two_floats(1.001f, 1000.5f), 0.01);
    CHECK_EQ_U(r.approx, 8);
    r = detect_on_trap(MODE_SILENT_STORE, &w, ACCESS_STORE, all(&w), two_floats(1.001f, 2000.0f), 0.01);
    CHECK_EQ_U(r.approx, 0);
    CHECK(!detect_fp_close(bits_of_double(0.0 / 0.0), bits_of_double(0.0 / 0.0), 8, ACCESS_F64, 0.5));
    CHECK(!detect_fp_close(1, 1, 2, ACCESS_F32, 0.5));  /* narrower than an element */
}

TEST(silent_load_keeps_watching_across_a_store)
{
    watch_slot w = slot_with(77, 4, ACCESS_INT);
    detect_result r = detect_on_trap(MODE_SILENT_LOAD, &w, ACCESS_STORE, all(&w), 12, 0.01);
    CHECK(!r.record && r.keep_watching);
    r = detect_on_trap(MODE_SILENT_LOAD, &w, ACCESS_LOAD, all(&w), 77, 0.01);
    CHECK(r.record && !r.keep_watching);
    CHECK_EQ_U(r.wasteful, 4);
    r = detect_on_trap(MODE_SILENT_LOAD, &w, ACCESS_LOAD, all(&w), 78, 0.01);
    CHECK_EQ_U(r.wasteful, 0);
    r = detect_on_trap(MODE_SILENT_LOAD, &w, ACCESS_RMW, all(&w), 77, 0.01);
    CHECK(r.record);
    CHECK_EQ_U(r.wasteful, 0);   /* the value loaded is gone: not counted silent */
}

int main(void)
{
    RUN(dead_store_is_store_after_store);
    RUN(a_narrower_access_ends_only_the_pairs_of_the_bytes_it_touched);
    RUN(a_silent_store_over_half_a_watch_is_silent_in_that_half_only);
    RUN(silent_store_compares_integers_exactly);
    RUN(silent_store_fp_is_approximate_within_tolerance);
    RUN(fp_elements_are_compared_one_by_one);
    RUN(silent_load_keeps_watching_across_a_store);
    return HARNESS_EXIT();
}

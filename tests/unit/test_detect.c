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
    return w;
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
    detect_result r = detect_on_trap(MODE_DEAD_STORE, &w, ACCESS_STORE, w.len, 9, 0.01);
    CHECK(r.record && !r.keep_watching);
    CHECK_EQ_U(r.bytes, 4);
    CHECK_EQ_U(r.wasteful, 4);
    r = detect_on_trap(MODE_DEAD_STORE, &w, ACCESS_LOAD, w.len, 5, 0.01);
    CHECK(r.record);
    CHECK_EQ_U(r.wasteful, 0);
    r = detect_on_trap(MODE_DEAD_STORE, &w, ACCESS_RMW, w.len, 6, 0.01);   /* reads first: not dead */
    CHECK_EQ_U(r.wasteful, 0);
}

TEST(dead_store_counts_only_the_overwritten_bytes)
{
    watch_slot w = slot_with(0, 8, ACCESS_INT);   /* an 8-byte zeroing store */
    detect_result r = detect_on_trap(MODE_DEAD_STORE, &w, ACCESS_STORE, 4, 7, 0.01);
    CHECK(r.record);
    CHECK_EQ_U(r.bytes, 8);      /* monitored */
    CHECK_EQ_U(r.wasteful, 4);   /* the 4-byte field store killed half */
    r = detect_on_trap(MODE_DEAD_STORE, &w, ACCESS_STORE, 16, 7, 0.01);  /* a wider store: all 8 */
    CHECK_EQ_U(r.wasteful, 8);
}

TEST(silent_store_compares_integers_exactly)
{
    watch_slot w = slot_with(0x1234, 8, ACCESS_INT);
    detect_result r = detect_on_trap(MODE_SILENT_STORE, &w, ACCESS_STORE, w.len, 0x1234, 0.01);
    CHECK_EQ_U(r.wasteful, 8);
    CHECK_EQ_U(r.approx, 0);
    r = detect_on_trap(MODE_SILENT_STORE, &w, ACCESS_STORE, w.len, 0x1235, 0.5);
    CHECK_EQ_U(r.wasteful, 0);
    CHECK_EQ_U(r.approx, 0);   /* tolerance never applies to integers */
}

TEST(silent_store_fp_is_approximate_within_tolerance)
{
    watch_slot w = slot_with(bits_of_double(100.0), 8, ACCESS_F64);
    detect_result r = detect_on_trap(MODE_SILENT_STORE, &w, ACCESS_STORE, w.len, bits_of_double(100.5), 0.01);
    CHECK_EQ_U(r.wasteful, 0);
    CHECK_EQ_U(r.approx, 8);
    r = detect_on_trap(MODE_SILENT_STORE, &w, ACCESS_STORE, w.len, bits_of_double(102.0), 0.01);
    CHECK_EQ_U(r.approx, 0);
    r = detect_on_trap(MODE_SILENT_STORE, &w, ACCESS_STORE, w.len, bits_of_double(100.0), 0.01);
    CHECK_EQ_U(r.wasteful, 8);   /* identical FP values are precise */
    CHECK_EQ_U(r.approx, 0);
}

TEST(fp_elements_are_compared_one_by_one)
{
    watch_slot w = slot_with(two_floats(1.0f, 1000.0f), 8, ACCESS_F32);
    detect_result r = detect_on_trap(MODE_SILENT_STORE, &w, ACCESS_STORE, w.len, two_floats(1.001f, 1000.5f), 0.01);
    CHECK_EQ_U(r.approx, 8);
    r = detect_on_trap(MODE_SILENT_STORE, &w, ACCESS_STORE, w.len, two_floats(1.001f, 2000.0f), 0.01);
    CHECK_EQ_U(r.approx, 0);
    CHECK(!detect_fp_close(bits_of_double(0.0 / 0.0), bits_of_double(0.0 / 0.0), 8, ACCESS_F64, 0.5));
    CHECK(!detect_fp_close(1, 1, 2, ACCESS_F32, 0.5));  /* narrower than an element */
}

TEST(silent_load_keeps_watching_across_a_store)
{
    watch_slot w = slot_with(77, 4, ACCESS_INT);
    detect_result r = detect_on_trap(MODE_SILENT_LOAD, &w, ACCESS_STORE, w.len, 12, 0.01);
    CHECK(!r.record && r.keep_watching);
    r = detect_on_trap(MODE_SILENT_LOAD, &w, ACCESS_LOAD, w.len, 77, 0.01);
    CHECK(r.record && !r.keep_watching);
    CHECK_EQ_U(r.wasteful, 4);
    r = detect_on_trap(MODE_SILENT_LOAD, &w, ACCESS_LOAD, w.len, 78, 0.01);
    CHECK_EQ_U(r.wasteful, 0);
    r = detect_on_trap(MODE_SILENT_LOAD, &w, ACCESS_RMW, w.len, 77, 0.01);
    CHECK(r.record);
    CHECK_EQ_U(r.wasteful, 0);   /* the value loaded is gone: not counted silent */
}

int main(void)
{
    RUN(dead_store_is_store_after_store);
    RUN(dead_store_counts_only_the_overwritten_bytes);
    RUN(silent_store_compares_integers_exactly);
    RUN(silent_store_fp_is_approximate_within_tolerance);
    RUN(fp_elements_are_compared_one_by_one);
    RUN(silent_load_keeps_watching_across_a_store);
    return HARNESS_EXIT();
}

/*
 * detect.c - dead store, silent store and silent load decisions (paper §4).
 *
 * Signal context: pure computation only.
 */
#include "detect.h"

#include <math.h>
#include <string.h>
#include "access.h"

static int close_enough(double a, double b, double tolerance)
{
    if (isnan(a) || isnan(b))
        return 0;
    double scale = fmax(fabs(a), fabs(b));
    return fabs(a - b) <= tolerance * scale;
}

int detect_fp_close(uint64_t a, uint64_t b, uint32_t len, uint8_t fp, double tolerance)
{
    if (fp != ACCESS_F32 && fp != ACCESS_F64)
        return 0;
    if (len < fp)
        return 0;   /* a watch narrower than one element cannot be read as FP */
    for (uint32_t off = 0; off + fp <= len; off += fp) {
        if (fp == ACCESS_F64) {
            double x, y;
            memcpy(&x, (char *)&a + off, 8);
            memcpy(&y, (char *)&b + off, 8);
            if (!close_enough(x, y, tolerance))
                return 0;
        } else {
            float x, y;
            memcpy(&x, (char *)&a + off, 4);
            memcpy(&y, (char *)&b + off, 4);
            if (!close_enough(x, y, tolerance))
                return 0;
        }
    }
    return 1;
}

static void compare_values(detect_result *r, const watch_slot *w, uint64_t now, double tolerance)
{
    if (now == w->value)
        r->wasteful = w->len;
    else if (detect_fp_close(w->value, now, w->len, w->fp, tolerance))
        r->approx = w->len;
}

detect_result detect_on_trap(enum wasp_mode mode, const watch_slot *w, uint8_t kind,
                             uint32_t touched, uint64_t now, double fp_tolerance)
{
    detect_result r = { .record = 1, .bytes = w->len };

    switch (mode) {
    case MODE_DEAD_STORE:
        /* Any read of M (a load, or the read half of a read-modify-write)
         * makes the earlier store useful. A store kills the bytes it
         * overwrites; the others' fate is unknown, so they count as
         * monitored, not dead (object zeroing, then a 4-byte field store). */
        if (!(kind & ACCESS_LOAD))
            r.wasteful = touched < w->len ? touched : w->len;
        break;
    case MODE_SILENT_STORE:
        compare_values(&r, w, now, fp_tolerance);
        break;
    case MODE_SILENT_LOAD:
        if (kind == ACCESS_STORE) {
            /* As JXPerf: the definition relates two successive LOADS, so a
             * store in between does not end the pair. */
            r.record = 0;
            r.keep_watching = 1;
        } else if (kind == ACCESS_LOAD) {
            compare_values(&r, w, now, fp_tolerance);
        }
        /* A read-modify-write loaded a value we can no longer see (memory
         * now holds what it stored): the pair counts, as not silent. */
        break;
    }
    return r;
}

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

/* Whether the FP elements of size fp that lie in the bytes of `in` (bit k:
 * byte k) are close: every such element whole in them, at least one. */
static int fp_close_in(uint64_t a, uint64_t b, uint32_t len, uint8_t fp, uint8_t in, double tolerance)
{
    int compared = 0;
    if (fp != ACCESS_F32 && fp != ACCESS_F64)
        return 0;
    for (uint32_t off = 0; off + fp <= len; off += fp) {
        uint8_t element = (uint8_t)(((1u << fp) - 1) << off);
        if (!(in & element))
            continue;
        if ((in & element) != element)
            return 0;   /* part of an element cannot be read as FP */
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
        compared = 1;
    }
    return compared;
}

int detect_fp_close(uint64_t a, uint64_t b, uint32_t len, uint8_t fp, double tolerance)
{
    return len >= fp && fp_close_in(a, b, len, fp, watch_bytes_mask(len), tolerance);
}

/* The bits of the bytes in mask `bytes` (bit k: byte k). */
static uint64_t bits_of(uint8_t bytes)
{
    uint64_t m = 0;
    for (int k = 0; k < 8; k++)
        if (bytes & (1u << k))
            m |= (uint64_t)0xff << (8 * k);
    return m;
}

/* Silent: the ended bytes hold what they held when the watch was armed. */
static void compare_values(detect_result *r, const watch_slot *w, uint64_t now, double tolerance)
{
    if (!((now ^ w->value) & bits_of(r->ended)))
        r->wasteful = r->bytes;
    else if (fp_close_in(w->value, now, w->len, w->fp, r->ended, tolerance))
        r->approx = r->bytes;
}

detect_result detect_on_trap(enum wasp_mode mode, const watch_slot *w, uint8_t kind,
                             uint8_t touched, uint64_t now, double fp_tolerance)
{
    /* Each byte pairs with its own next access, as the exact mode pairs
     * them: an access over part of the watch ends the pairs of the bytes it
     * touched; the others stay watched (monitor.c). Counted whole at the
     * first trap, Java's object zeroing and array copies before 4-byte
     * field stores read half as dead as they are (e2e bias_split). */
    uint8_t ended = w->pending & touched;
    detect_result r = { .record = 1, .ended = ended, .bytes = (uint32_t)__builtin_popcount(ended) };

    if (!ended) {
        /* Only bytes whose pairs already ended: nothing new. */
        r.record = 0;
        r.keep_watching = 1;
        return r;
    }
    switch (mode) {
    case MODE_DEAD_STORE:
        /* Any read of M (a load, or the read half of a read-modify-write)
         * makes the earlier store useful. */
        if (!(kind & ACCESS_LOAD))
            r.wasteful = r.bytes;
        break;
    case MODE_SILENT_STORE:
        compare_values(&r, w, now, fp_tolerance);
        break;
    case MODE_SILENT_LOAD:
        if (kind == ACCESS_STORE) {
            /* As JXPerf: the definition relates two successive LOADS, so a
             * store in between does not end the pair. */
            r = (detect_result){ .keep_watching = 1 };
            return r;
        }
        if (kind == ACCESS_LOAD)
            compare_values(&r, w, now, fp_tolerance);
        /* A read-modify-write loaded a value we can no longer see (memory
         * now holds what it stored): the pair counts, as not silent. */
        break;
    }
    r.keep_watching = (w->pending & ~ended) != 0;
    return r;
}

/*
 * num.c - decimal numbers with exact overflow checks (num.h).
 *
 * strtod and strtoul were the bugs this replaces: "nan" and "nanms" passed
 * as intervals, "-1" wrapped, and a check that stopped one digit early
 * refused 18446744073709551615 while accepting ...605.
 */
#include "num.h"

#include <string.h>

/* Digits of t up to the first non-digit into *v; returns how many, or -1
 * when the value passes 2^64-1. */
static int num_digits(const char *t, uint64_t *v)
{
    int n = 0;
    *v = 0;
    for (; t[n] >= '0' && t[n] <= '9'; n++) {
        unsigned d = (unsigned)(t[n] - '0');
        if (*v > (UINT64_MAX - d) / 10) return -1;
        *v = *v * 10 + d;
    }
    return n;
}

enum num_result num_parse_u64(const char *text, uint64_t *out)
{
    uint64_t v;
    int n = num_digits(text, &v);
    if (n < 0) {
        /* All digits but too many: out of range, not malformed. */
        return text[strspn(text, "0123456789")] ? NUM_MALFORMED : NUM_RANGE;
    }
    if (n == 0 || text[n]) return NUM_MALFORMED;
    *out = v;
    return NUM_OK;
}

/* frac (ndigits decimals) times scale, when whole; -1 otherwise. */
static int num_fraction(const char *frac, int ndigits, uint64_t scale, uint64_t *out)
{
    uint64_t pow10 = 1, f = 0;
    for (int i = 0; i < ndigits; i++) {
        if (pow10 > UINT64_MAX / 10) return -1;   /* more decimals than any unit holds */
        pow10 *= 10;
        f = f * 10 + (uint64_t)(frac[i] - '0');
    }
    /* f < pow10 <= 10^19 and scale <= 10^9 in practice: use 128 bits. */
    unsigned __int128 x = (unsigned __int128)f * scale;
    if (x % pow10) return -1;
    *out = (uint64_t)(x / pow10);
    return 0;
}

enum num_result num_parse_scaled(const char *text, const num_unit *units, size_t nunits,
                                 uint64_t *out)
{
    uint64_t ip, fp = 0;
    int n = num_digits(text, &ip), nf = 0;
    if (n < 0) return NUM_RANGE;
    const char *t = text + n;
    if (*t == '.') {
        nf = (int)strspn(t + 1, "0123456789");
        if (nf == 0) return NUM_MALFORMED;
    }
    if (n == 0 && nf == 0) return NUM_MALFORMED;
    const char *suffix = nf ? t + 1 + nf : t;
    for (size_t i = 0; i < nunits; i++) {
        if (strcmp(suffix, units[i].suffix) != 0) continue;
        uint64_t scale = units[i].scale;
        if (nf && num_fraction(t + 1, nf, scale, &fp) != 0) return NUM_MALFORMED;
        if (scale && ip > UINT64_MAX / scale) return NUM_RANGE;
        if (ip * scale > UINT64_MAX - fp) return NUM_RANGE;
        *out = ip * scale + fp;
        return NUM_OK;
    }
    return NUM_MALFORMED;
}

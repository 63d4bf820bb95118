/*
 * num.h - the one parser of the numbers people and files type.
 *
 * Decimal digits only: no sign, no spaces, no hex, no "nan" or "inf", no
 * exponent, and every overflow refused, so a number is either exactly what
 * was written or an error the caller can name. Pure functions, no locale,
 * no allocation: safe anywhere but signal context is never asked of them.
 */
#ifndef WASP_NUM_H
#define WASP_NUM_H

#include <stddef.h>
#include <stdint.h>

/* A suffix and what one unit of it is worth ("ms", 1000000). */
typedef struct num_unit {
    const char *suffix;
    uint64_t scale;
} num_unit;

enum num_result { NUM_OK = 0, NUM_MALFORMED = -1, NUM_RANGE = -2 };

/* "0".."18446744073709551615". */
enum num_result num_parse_u64(const char *text, uint64_t *out);

/* "D[.D]<suffix>" with one of units' suffixes ("" for none, if listed):
 * the value times the unit's scale, which must come out whole ("1.5ms" is
 * 1500000 ns; "1.5ns" is malformed) and fit 64 bits (else NUM_RANGE). */
enum num_result num_parse_scaled(const char *text, const num_unit *units, size_t nunits,
                                 uint64_t *out);

#endif

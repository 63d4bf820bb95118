/*
 * text_escape.c - printable UTF-8 for the text and collapsed reports.
 *
 * Function, file and module names come from the profiled program's
 * binaries and can hold any byte. A C1 control (CSI is U+009B, 0xc2 0x9b
 * in UTF-8, or a bare 0x9b to a terminal in 8-bit mode) can move the
 * cursor or rewrite the screen like ESC can, so both forms are escaped,
 * with every other ill-formed byte.
 */
#include "text_escape.h"

/* Bytes in a sequence led by b, 0 for a byte that cannot lead one. */
static size_t utf8_length(unsigned char b)
{
    if (b < 0x80) return 1;
    if (b >= 0xc2 && b <= 0xdf) return 2;
    if (b >= 0xe0 && b <= 0xef) return 3;
    if (b >= 0xf0 && b <= 0xf4) return 4;
    return 0;
}

size_t text_printable_len(const unsigned char *p)
{
    size_t n = utf8_length(p[0]);
    if (n == 0 || p[0] < 0x20 || p[0] == 0x7f) return 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80) return 0;
    /* Overlong and out-of-range forms, and surrogates (RFC 3629). */
    if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] > 0x9f) ||
        (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] > 0x8f))
        return 0;
    if (p[0] == 0xc2 && p[1] <= 0x9f) return 0;   /* C1 controls */
    return n;
}

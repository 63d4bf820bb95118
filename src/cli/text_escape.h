/*
 * text_escape.h - what of a name may reach a terminal as it is.
 */
#ifndef WASP_TEXT_ESCAPE_H
#define WASP_TEXT_ESCAPE_H

#include <stddef.h>

/* Length of the well-formed UTF-8 character at p when it is printable;
 * 0 when *p is NUL, a C0 or C1 control character (U+0000-001F, U+007F,
 * U+0080-009F: ESC and CSI drive terminals), or a byte of an ill-formed
 * sequence. The caller escapes *p alone and carries on at p + 1. */
size_t text_printable_len(const unsigned char *p);

#endif

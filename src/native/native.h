/*
 * native.h - the native front end: stack walking and symbols for compiled code.
 */
#ifndef WASP_NATIVE_H
#define WASP_NATIVE_H

#include "engine.h"

extern const engine_frontend native_frontend;

/* unwind.c: once, before the first thread is profiled. */
void native_unwind_init(void);

/* symbols.c: names a native frame (normal context). */
void native_symbolize(frame_key f, int leaf, prof_frame *out);

#endif

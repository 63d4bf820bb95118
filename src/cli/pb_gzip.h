/*
 * pb_gzip.h - a protobuf-c message, packed and gzip'd into a stream.
 */
#ifndef WASP_PB_GZIP_H
#define WASP_PB_GZIP_H

#include <protobuf-c/protobuf-c.h>
#include <stdio.h>

/* Packs msg and writes it to f as one gzip member. Returns 0, or -1 on a
 * write error or out of memory. */
int pb_gzip_write(FILE *f, const ProtobufCMessage *msg);

#endif

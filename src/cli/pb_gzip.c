/*
 * pb_gzip.c - streams a protobuf-c message through zlib into a FILE.
 *
 * protobuf-c packs into a ProtobufCBuffer whose append callback deflates
 * each piece as it comes, so the packed message is never held in memory
 * whole.
 */
#include "pb_gzip.h"

#include <errno.h>
#include <stdlib.h>
#include <zlib.h>

typedef struct pb_gzip {
    ProtobufCBuffer base;   /* first, so protobuf-c's pointer is ours */
    z_stream z;
    FILE *f;
    int failed;
    unsigned char out[1 << 16];
} pb_gzip;

static int pb_gzip_deflate(pb_gzip *g, int flush)
{
    int rc;
    do {
        g->z.next_out = g->out;
        g->z.avail_out = sizeof g->out;
        rc = deflate(&g->z, flush);
        size_t n = sizeof g->out - g->z.avail_out;
        if (rc == Z_STREAM_ERROR || (n && fwrite(g->out, 1, n, g->f) != n)) return -1;
    } while (flush == Z_FINISH ? rc != Z_STREAM_END : g->z.avail_out == 0);
    return 0;
}

static void pb_gzip_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
    pb_gzip *g = (pb_gzip *)b;
    while (len && !g->failed) {
        uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;
        g->z.next_in = (Bytef *)data;
        g->z.avail_in = n;
        g->failed = pb_gzip_deflate(g, Z_NO_FLUSH) != 0;
        data += n;
        len -= n;
    }
}

/* The gzip header carries no time or name (deflate's defaults), so the same
 * message always gives the same bytes. */
int pb_gzip_write(FILE *f, const ProtobufCMessage *msg)
{
    pb_gzip *g = calloc(1, sizeof *g);
    if (!g) return -1;
    g->base.append = pb_gzip_append;
    g->f = f;
    if (deflateInit2(&g->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK) {
        free(g);
        errno = ENOMEM;
        return -1;
    }
    protobuf_c_message_pack_to_buffer(msg, &g->base);
    int rc = g->failed || pb_gzip_deflate(g, Z_FINISH) != 0 ? -1 : 0;
    deflateEnd(&g->z);
    free(g);
    return rc;
}

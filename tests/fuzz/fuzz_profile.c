/*
 * fuzz_profile.c - libFuzzer target: the profile reader, then the merge
 * and the text, JSON, collapsed and HTML writers on whatever it accepts.
 *
 * Mutated bytes almost never keep a valid CRC, which would stop every
 * input at the checksum; so when the first byte is odd the rest is taken
 * as a profile body and given a correct `end` record, and the records
 * themselves get fuzzed. An even first byte feeds the rest as it is.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "merge.h"
#include "out_collapsed.h"
#include "out_html.h"
#include "out_json.h"
#include "out_text.h"
#include "profile.h"

static FILE *sink;

/* data with an end record for its lines appended (malloc'd). */
static char *with_end(const uint8_t *data, size_t size, size_t *len)
{
    char *buf = malloc(size + 64);
    if (!buf) return NULL;
    memcpy(buf, data, size);
    size_t lines = 0;
    for (size_t i = 0; i < size; i++) lines += buf[i] == '\n';
    if (size && buf[size - 1] != '\n') {
        buf[size++] = '\n';
        lines++;
    }
    uLong crc = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)buf, (uInt)size);
    *len = size + (size_t)snprintf(buf + size, 64, "end\t%zu\t%08lx\n", lines, crc);
    return buf;
}

static void merge_and_write(const profile *p)
{
    merge_model m;
    char err[256];
    merge_init(&m);
    if (merge_add(&m, p, "fuzz", err, sizeof err) == 0 && merge_add(&m, p, "again", err, sizeof err) == 0) {
        merge_finish(&m);
        text_write_report(sink, &m, 10);
        json_write_report(sink, &m, 0);
        collapsed_write_report(sink, &m, COLLAPSED_WATCH);
        html_write_report(sink, &m, HTML_DEFAULT_TOP);
    }
    merge_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!sink) sink = fopen("/dev/null", "w");
    if (size == 0 || size > (1u << 20)) return 0;
    size_t len = size - 1;
    char *buf = data[0] & 1 ? with_end(data + 1, size - 1, &len) : malloc(len + 1);
    if (!buf) return 0;
    if (!(data[0] & 1)) memcpy(buf, data + 1, len);
    FILE *f = fmemopen(buf, len ? len : 1, "rb");
    if (f) {
        profile p;
        char err[512];
        if (len && profile_read_stream(f, "fuzz", &p, err, sizeof err) == 0) {
            merge_and_write(&p);
            profile_free(&p);
        }
        fclose(f);
    }
    free(buf);
    return 0;
}

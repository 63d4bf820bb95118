/*
 * fuzz_options.c - libFuzzer target: every option parser. The input is
 * split at NUL bytes into words; the first byte picks the parser:
 * the library's key=value parser (WASP_OPTIONS, -agentpath), `wasp run`'s
 * flags (escaped into an option string and parsed back, which must
 * always succeed for a value that passed the CLI), or `wasp report`'s.
 * Their usage messages are silenced by tests/fuzz/run (-close_fd_mask=3).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "report.h"
#include "run.h"

#define MAX_WORDS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 8192) return 0;
    char *buf = malloc(size + 1);
    char *words[MAX_WORDS + 2];
    int n = 0;
    memcpy(buf, data + 1, size - 1);
    buf[size - 1] = '\0';
    words[n++] = "fuzz";
    for (char *w = buf; n <= MAX_WORDS && w < buf + size - 1; w += strlen(w) + 1) words[n++] = w;
    words[n] = NULL;
    char err[512];
    switch (data[0] % 3) {
    case 0: {
        wasp_options o;
        options_defaults(&o);
        options_parse(buf, &o, err, sizeof err);
        break;
    }
    case 1: run_parse_options(n, words, err, sizeof err); break;
    default: report_parse_args(n, words); break;
    }
    free(buf);
    return 0;
}

/*
 * out_html_code.c - disassembles the code blobs the HTML report's contexts
 * lie in (merge.h: merge_ctx.code and .pc) into the page's "code" array.
 *
 * Owns what of the machine code a page shows. x86 decodes only forwards,
 * so a blob is swept from its start; the instructions contexts name are
 * anchors: the sweep never decodes across one (bytes that would straddle it
 * show as .byte), so a context's instruction always starts a row and is
 * found by address whatever data or padding precedes it. Bytes that do not
 * decode show as .byte too. Caps keep the page quick to open: at most
 * HTML_CODE_MAX_BLOBS blobs and HTML_CODE_MAX_INSNS instructions; a blob
 * longer than HTML_CODE_WHOLE instructions, or longer than what is left,
 * keeps HTML_CODE_AROUND instructions either side of each anchor, and a
 * blob whose anchors do not fit either is left out. The page says both.
 *
 * Source lines come from the blob's line table (prof_code_line): a row's
 * line is that of the last entry at or before its offset. Rows name their
 * source through a per-blob table of (function, file); the function is ""
 * when it is the compiled method itself, so only inlined callees are named.
 */
#include "out_html_code.h"

#include "decode.h"
#include "json_escape.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define HC_NONE SIZE_MAX

typedef struct hc_blob {
    size_t code;            /* model code index */
    uint32_t *anchors;      /* offsets of the instructions contexts name, sorted, unique */
    size_t nanchors, cap_anchors;
    uint32_t *rows;         /* offset of every row, increasing */
    size_t nrows;
    uint8_t *keep;          /* per row; NULL when every row is kept */
    size_t out;             /* index in the page's "code", HC_NONE when left out */
} hc_blob;

struct html_code {
    const merge_model *m;
    size_t *blob_of;        /* model code -> blob, HC_NONE when no context uses it */
    hc_blob *blobs;
    size_t nblobs, nout, insns, left_out, partial;
};

static int hc_u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Notes that context ctx names an instruction in its blob. */
static int hc_use(html_code *hc, size_t ctx)
{
    const merge_ctx *c = hc->m->contexts[ctx];
    if (c->code == MERGE_NO_CODE) return 0;
    if (hc->blob_of[c->code] == HC_NONE) {
        hc_blob *b = &hc->blobs[hc->nblobs];
        memset(b, 0, sizeof *b);
        b->code = c->code;
        b->out = HC_NONE;
        hc->blob_of[c->code] = hc->nblobs++;
    }
    hc_blob *b = &hc->blobs[hc->blob_of[c->code]];
    if (b->nanchors == b->cap_anchors) {
        size_t ncap = b->cap_anchors ? 2 * b->cap_anchors : 8;
        uint32_t *a = realloc(b->anchors, ncap * sizeof *a);
        if (!a) return -1;
        b->anchors = a;
        b->cap_anchors = ncap;
    }
    b->anchors[b->nanchors++] = (uint32_t)(c->pc - hc->m->codes[c->code]->start);
    return 0;
}

/* Length of the instruction at off, decoding no further than limit; 0 when
 * the bytes there do not decode. */
static size_t hc_insn_len(const prof_code *c, uint32_t off, uint32_t limit)
{
    char text[160];
    size_t len;
    decode_format_bytes(c->bytes + off, limit - off, c->start + off, 0, text, sizeof text, &len);
    return len;
}

/* Splits the blob into rows: instructions, cut at anchors, and single
 * bytes that do not decode. */
static int hc_sweep(const html_code *hc, hc_blob *b)
{
    const prof_code *c = hc->m->codes[b->code];
    qsort(b->anchors, b->nanchors, sizeof *b->anchors, hc_u32_cmp);
    size_t n = 0;
    for (size_t i = 0; i < b->nanchors; i++)
        if (!n || b->anchors[i] != b->anchors[n - 1]) b->anchors[n++] = b->anchors[i];
    b->nanchors = n;
    size_t cap = 256;
    b->rows = malloc(cap * sizeof *b->rows);
    if (!b->rows) return -1;
    size_t ai = 0;
    for (uint32_t off = 0; off < c->size;) {
        while (ai < b->nanchors && b->anchors[ai] <= off) ai++;
        uint32_t limit = ai < b->nanchors ? b->anchors[ai] : c->size;
        size_t len = hc_insn_len(c, off, limit);
        if (b->nrows == cap) {
            uint32_t *r = realloc(b->rows, 2 * cap * sizeof *r);
            if (!r) return -1;
            b->rows = r;
            cap *= 2;
        }
        b->rows[b->nrows++] = off;
        off += len ? (uint32_t)len : 1;
    }
    return 0;
}

/* Keeps HTML_CODE_AROUND rows either side of every anchor; returns how
 * many rows that keeps, or SIZE_MAX when out of memory. */
static size_t hc_windows(hc_blob *b)
{
    b->keep = calloc(b->nrows ? b->nrows : 1, 1);
    if (!b->keep) return SIZE_MAX;
    size_t kept = 0, r = 0;
    for (size_t i = 0; i < b->nanchors; i++) {
        while (r < b->nrows && b->rows[r] < b->anchors[i]) r++;
        size_t lo = r > HTML_CODE_AROUND ? r - HTML_CODE_AROUND : 0;
        size_t hi = r + HTML_CODE_AROUND + 1 < b->nrows ? r + HTML_CODE_AROUND + 1 : b->nrows;
        for (size_t k = lo; k < hi; k++) {
            kept += !b->keep[k];
            b->keep[k] = 1;
        }
    }
    return kept;
}

/* Takes blobs in order of first use while the caps allow. */
static int hc_select(html_code *hc)
{
    for (size_t i = 0; i < hc->nblobs; i++) {
        hc_blob *b = &hc->blobs[i];
        size_t left = HTML_CODE_MAX_INSNS - hc->insns, kept;
        if (hc->nout == HTML_CODE_MAX_BLOBS || left == 0) {
            hc->left_out++;
            continue;
        }
        if (hc_sweep(hc, b) != 0) return -1;
        if (b->nrows <= HTML_CODE_WHOLE && b->nrows <= left) {
            kept = b->nrows;
        } else {
            if ((kept = hc_windows(b)) == SIZE_MAX) return -1;
            if (kept > left) {
                hc->left_out++;
                continue;
            }
            hc->partial += kept < b->nrows;
        }
        hc->insns += kept;
        b->out = hc->nout++;
    }
    return 0;
}

html_code *html_code_plan(const merge_model *m, const size_t *ctxs, size_t n)
{
    html_code *hc = calloc(1, sizeof *hc);
    if (!hc) return NULL;
    hc->m = m;
    hc->blob_of = malloc((m->ncodes ? m->ncodes : 1) * sizeof *hc->blob_of);
    hc->blobs = calloc(m->ncodes ? m->ncodes : 1, sizeof *hc->blobs);
    if (!hc->blob_of || !hc->blobs) {
        html_code_free(hc);
        return NULL;
    }
    for (size_t i = 0; i < m->ncodes; i++) hc->blob_of[i] = HC_NONE;
    for (size_t i = 0; i < n; i++) {
        if (hc_use(hc, ctxs[i]) != 0) {
            html_code_free(hc);
            return NULL;
        }
    }
    if (hc_select(hc) != 0) {
        html_code_free(hc);
        return NULL;
    }
    return hc;
}

void html_code_ctx(FILE *f, const html_code *hc, size_t ctx)
{
    const merge_ctx *c = hc->m->contexts[ctx];
    if (c->code == MERGE_NO_CODE || hc->blob_of[c->code] == HC_NONE) return;
    const hc_blob *b = &hc->blobs[hc->blob_of[c->code]];
    if (b->out == HC_NONE) fputs(",-1", f);
    else fprintf(f, ",%zu", b->out);
    fprintf(f, ",\"0x%" PRIx64 "\"", c->pc);
}

/* ---- writing ---- */

/* Per-blob table of the (function, file) pairs its rows use, by the index
 * of the first line entry that names each. */
typedef struct hc_srcs {
    const prof_code *c;
    size_t *line_src;       /* line entry -> src, HC_NONE until used */
    size_t *first_line;     /* src -> line entry */
    size_t n;
} hc_srcs;

static const char *hc_fn(const prof_code *c, size_t line)
{
    const char *fn = c->lines[line].function;
    return strcmp(fn, c->name) ? fn : "";
}

static size_t hc_src(hc_srcs *s, size_t line)
{
    if (s->line_src[line] != HC_NONE) return s->line_src[line];
    const prof_code_line *l = &s->c->lines[line];
    size_t k = 0;
    while (k < s->n && !(strcmp(hc_fn(s->c, s->first_line[k]), hc_fn(s->c, line)) == 0 &&
                         strcmp(s->c->lines[s->first_line[k]].file, l->file) == 0))
        k++;
    if (k == s->n) s->first_line[s->n++] = line;
    return s->line_src[line] = k;
}

/* The row's text in one syntax: the instruction, or its bytes as .byte
 * when they do not decode to exactly one instruction of the row's length. */
static void hc_text(FILE *f, const prof_code *c, uint32_t off, uint32_t len, int intel)
{
    char text[160];
    size_t ilen;
    decode_format_bytes(c->bytes + off, len, c->start + off, intel, text, sizeof text, &ilen);
    if (ilen != len) {
        size_t at = (size_t)snprintf(text, sizeof text, ".byte");
        for (uint32_t k = 0; k < len && at < sizeof text; k++)
            at += (size_t)snprintf(text + at, sizeof text - at, "%s0x%02x", k ? ", " : " ",
                                   c->bytes[off + k]);
    }
    json_escape_str(f, text);
}

/* The file the blob's own method is in: that of its first line entry that
 * names it. */
static const char *hc_file(const prof_code *c)
{
    for (uint32_t j = 0; j < c->nlines; j++)
        if (!strcmp(c->lines[j].function, c->name)) return c->lines[j].file;
    return "";
}

/* Every kept row, and for each run of rows left out its length. */
static void hc_rows(FILE *f, const hc_blob *b, hc_srcs *s)
{
    const prof_code *c = s->c;
    const char *sep = "";
    size_t gap = 0, line = 0;
    for (size_t r = 0; r <= b->nrows; r++) {
        if (r < b->nrows && b->keep && !b->keep[r]) {
            gap++;
            continue;
        }
        if (gap) fprintf(f, "%s%zu", sep, gap);
        if (gap) sep = ",";
        gap = 0;
        if (r == b->nrows) break;
        uint32_t off = b->rows[r];
        uint32_t len = (r + 1 < b->nrows ? b->rows[r + 1] : c->size) - off;
        while (line < c->nlines && c->lines[line].offset <= off) line++;
        fprintf(f, "%s\n[\"0x%" PRIx64 "\",%" PRIu32 ",", sep, c->start + off,
                line ? c->lines[line - 1].line : 0);
        sep = ",";
        hc_text(f, c, off, len, 0);
        fputc(',', f);
        hc_text(f, c, off, len, 1);
        if (line) fprintf(f, ",%zu", hc_src(s, line - 1));
        fputc(']', f);
    }
}

static int hc_blob_write(FILE *f, const html_code *hc, const hc_blob *b)
{
    hc_srcs s = { hc->m->codes[b->code], NULL, NULL, 0 };
    const prof_code *c = s.c;
    s.line_src = malloc((c->nlines ? c->nlines : 1) * sizeof *s.line_src);
    s.first_line = malloc((c->nlines ? c->nlines : 1) * sizeof *s.first_line);
    if (!s.line_src || !s.first_line) {
        free(s.line_src);
        free(s.first_line);
        return -1;
    }
    for (uint32_t j = 0; j < c->nlines; j++) s.line_src[j] = HC_NONE;
    fputs("{\"name\":", f);
    json_escape_str(f, c->name);
    fputs(",\"file\":", f);
    json_escape_str(f, hc_file(c));
    fprintf(f, ",\"start\":\"0x%" PRIx64 "\",\"size\":%" PRIu32 ",\"insns\":[", c->start, c->size);
    hc_rows(f, b, &s);
    fputs("],\n\"srcs\":[", f);
    for (size_t k = 0; k < s.n; k++) {
        fputs(k ? ",[" : "[", f);
        json_escape_str(f, hc_fn(c, s.first_line[k]));
        fputc(',', f);
        json_escape_str(f, c->lines[s.first_line[k]].file);
        fputc(']', f);
    }
    fputs("]}", f);
    free(s.line_src);
    free(s.first_line);
    return 0;
}

int html_code_write(FILE *f, const html_code *hc)
{
    fputs("\"code\":[", f);
    size_t written = 0;
    for (size_t i = 0; i < hc->nblobs; i++) {
        const hc_blob *b = &hc->blobs[i];
        if (b->out == HC_NONE) continue;
        if (written++) fputs(",\n", f);
        if (hc_blob_write(f, hc, b) != 0) return -1;
    }
    fprintf(f, "],\n\"code_cap\":{\"max_blobs\":%d,\"max_insns\":%d,\"around\":%d,"
            "\"left_out\":%zu,\"partial\":%zu}", HTML_CODE_MAX_BLOBS, HTML_CODE_MAX_INSNS,
            HTML_CODE_AROUND, hc->left_out, hc->partial);
    return 0;
}

void html_code_free(html_code *hc)
{
    if (!hc) return;
    for (size_t i = 0; hc->blobs && i < hc->nblobs; i++) {
        free(hc->blobs[i].anchors);
        free(hc->blobs[i].rows);
        free(hc->blobs[i].keep);
    }
    free(hc->blobs);
    free(hc->blob_of);
    free(hc);
}

/*
 * out_collapsed.c - writes the report model (merge.h) as collapsed stacks.
 *
 * Owns the collapsed-stack text: one line per calling context, frames root
 * first separated by ';', then a space and the context's wasteful bytes
 * (FlameGraph's stackcollapse output, which speedscope and flamegraph.pl
 * read). Frames keep wasp's identity, function plus file:line, and the leaf
 * instruction ends the stack in brackets, so a flame graph shows the line
 * and the instruction that wasted the bytes. Every pair is counted; nothing
 * is capped, because this output is for tools, not for a browser.
 */
#include "out_collapsed.h"
#include "text_escape.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct collapsed_line {
    size_t ctx;         /* index into merge_model.contexts */
    uint64_t bytes;
} collapsed_line;

enum collapsed_side collapsed_wasteful_side(const char *mode)
{
    return strcmp(mode, "dead-store") == 0 ? COLLAPSED_WATCH : COLLAPSED_TRAP;
}

/* ';' separates frames and a newline ends a stack; neither may survive in
 * a name, nor may a control character (text_escape.c). Spaces may: readers split the count off at the last space. */
static void collapsed_puts(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = text_printable_len(p);
        if (*p == ';') fputc(':', f);
        else if (n) fwrite(p, 1, n, f);
        else fputc('?', f);
        p += n ? n : 1;
    }
}

static void collapsed_frame(FILE *f, const merge_frame *fr)
{
    const char *where = fr->file[0] ? fr->file : fr->module;
    const char *slash = fr->file[0] ? NULL : strrchr(where, '/');
    collapsed_puts(f, fr->function[0] ? fr->function : "?");
    if (!where[0]) return;
    fputs(" (", f);
    collapsed_puts(f, slash ? slash + 1 : where);
    if (fr->file[0] && fr->line) fprintf(f, ":%" PRIu32, fr->line);
    fputc(')', f);
}

static void collapsed_stack(FILE *f, const merge_ctx *c, uint64_t bytes)
{
    for (size_t i = c->nframes; i-- > 0;) {
        collapsed_frame(f, &c->frames[i]);
        if (i) fputc(';', f);
    }
    if (c->instruction[0]) {
        fputs(c->nframes ? ";[" : "[", f);
        collapsed_puts(f, c->instruction);
        fputc(']', f);
    }
    fprintf(f, " %" PRIu64 "\n", bytes);
}

/* Heaviest stacks first; the merge order breaks ties, so output is stable. */
static int collapsed_cmp(const void *va, const void *vb)
{
    const collapsed_line *a = va, *b = vb;
    if (a->bytes != b->bytes) return a->bytes < b->bytes ? 1 : -1;
    return (a->ctx > b->ctx) - (a->ctx < b->ctx);
}

int collapsed_write_report(FILE *f, const merge_model *m, enum collapsed_side side)
{
    if (side == COLLAPSED_WASTEFUL) side = collapsed_wasteful_side(m->mode);
    collapsed_line *lines = calloc(m->ncontexts ? m->ncontexts : 1, sizeof *lines);
    if (!lines) return -1;
    for (size_t i = 0; i < m->ncontexts; i++) lines[i].ctx = i;
    for (size_t i = 0; i < m->npairs; i++) {
        const merge_pair *q = &m->pairs[i];
        collapsed_line *l = &lines[side == COLLAPSED_WATCH ? q->watch_id : q->trap_id];
        uint64_t add = q->wasteful_bytes + q->approx_bytes;
        if (add < q->wasteful_bytes) add = UINT64_MAX;
        l->bytes = l->bytes + add < l->bytes ? UINT64_MAX : l->bytes + add;
    }
    if (m->ncontexts) qsort(lines, m->ncontexts, sizeof *lines, collapsed_cmp);
    for (size_t i = 0; i < m->ncontexts && lines[i].bytes; i++)
        collapsed_stack(f, m->contexts[lines[i].ctx], lines[i].bytes);
    free(lines);
    return ferror(f) ? -1 : 0;
}

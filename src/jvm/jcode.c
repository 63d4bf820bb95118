/*
 * jcode.c - what a profile keeps of JIT-compiled code: its bytes and, per
 * stretch of instructions, the (possibly inlined) method and line they come
 * from, so reports can show the disassembly with source lines.
 *
 * Normal context only (JVMTI callbacks, profile writing).
 */
#include <jni.h>
#include <jvmticmlr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codemap.h"
#include "exactmaps.h"
#include "decode.h"
#include "jvm.h"
#include "memread.h"

static int by_offset(const void *a, const void *b)
{
    const code_scope *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* HotSpot's debug records (PcDescs) mark where the code of a scope ends:
 * the scope of an instruction is the first record at or after it, innermost
 * inlined method first (jvmticmlr.h). */
static uint32_t scopes_from_inline_info(const void *compile_info, uint64_t start, uint64_t size,
                                        code_scope *out, uint32_t cap)
{
    uint32_t n = 0;
    for (const jvmtiCompiledMethodLoadRecordHeader *h = compile_info; h; h = h->next) {
        if (h->kind != JVMTI_CMLR_INLINE_INFO)
            continue;
        const jvmtiCompiledMethodLoadInlineRecord *r = (const void *)h;
        for (jint i = 0; i < r->numpcs && n < cap; i++) {
            const PCStackInfo *pi = &r->pcinfo[i];
            uint64_t pc = (uint64_t)(uintptr_t)pi->pc;
            if (pi->numstackframes < 1 || pc < start || pc > start + size)
                continue;
            out[n++] = (code_scope){ .offset = (uint32_t)(pc - start), .bci = pi->bcis[0],
                                     .method = (uint64_t)(uintptr_t)pi->methods[0] };
        }
    }
    return n;
}

static uint32_t count_inline_pcs(const void *compile_info)
{
    uint32_t n = 0;
    for (const jvmtiCompiledMethodLoadRecordHeader *h = compile_info; h; h = h->next)
        if (h->kind == JVMTI_CMLR_INLINE_INFO)
            n += (uint32_t)((const jvmtiCompiledMethodLoadInlineRecord *)h)->numpcs;
    return n;
}

/* Keeps one record per change of scope. */
static uint32_t squeeze(code_scope *s, uint32_t n)
{
    uint32_t k = 0;
    qsort(s, n, sizeof(*s), by_offset);
    for (uint32_t i = 0; i < n; i++) {
        if (k && s[k - 1].method == s[i].method && s[k - 1].bci == s[i].bci)
            s[k - 1].offset = s[i].offset;   /* the same scope reaches further */
        else
            s[k++] = s[i];
    }
    return k;
}

code_scope *jcode_scopes(jmethodID method, uint64_t start, uint64_t size, const void *compile_info,
                         const jvmtiAddrLocationMap *map, jint map_length, uint32_t *nscopes)
{
    uint32_t cap = compile_info ? count_inline_pcs(compile_info) : 0, n = 0;
    if (cap == 0 && map_length > 0)
        cap = (uint32_t)map_length;
    code_scope *s = cap ? malloc(sizeof(*s) * cap) : NULL;
    if (!s)
        return NULL;
    if (compile_info)
        n = scopes_from_inline_info(compile_info, start, size, s, cap);
    for (jint i = 0; n == 0 && map && i < map_length; i++) {
        uint64_t pc = (uint64_t)(uintptr_t)map[i].start_address;
        if (pc >= start && pc <= start + size)
            s[n++] = (code_scope){ .offset = (uint32_t)(pc - start), .bci = (int32_t)map[i].location,
                                   .method = (uint64_t)(uintptr_t)method };
    }
    *nscopes = squeeze(s, n);
    return s;
}

static int by_scope_offset(const void *a, const void *b)
{
    const wx_scope *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* One scope per PcDesc, every frame of its inlining chain kept (the exact
 * tool names inlined frames as AsyncGetCallTrace does). */
static int exact_inline_scopes(wx_code *code, const void *compile_info, wx_scope *s, wx_frame *f,
                               uint32_t cap_frames)
{
    uint32_t n = 0, nf = 0;
    for (const jvmtiCompiledMethodLoadRecordHeader *h = compile_info; h; h = h->next) {
        if (h->kind != JVMTI_CMLR_INLINE_INFO)
            continue;
        const jvmtiCompiledMethodLoadInlineRecord *r = (const void *)h;
        for (jint i = 0; i < r->numpcs; i++) {
            const PCStackInfo *pi = &r->pcinfo[i];
            uint64_t pc = (uint64_t)(uintptr_t)pi->pc;
            if (pi->numstackframes < 1 || pc < code->start || pc > code->end ||
                nf + (uint32_t)pi->numstackframes > cap_frames)
                continue;
            s[n++] = (wx_scope){ (uint32_t)(pc - code->start), (uint32_t)pi->numstackframes, nf };
            for (jint k = 0; k < pi->numstackframes; k++)
                f[nf++] = (wx_frame){ (uint64_t)(uintptr_t)pi->methods[k], (uint64_t)(int64_t)pi->bcis[k],
                                      WX_FRAME_JMETHOD };
        }
    }
    code->nframes = nf;
    return (int)n;
}

int exactmaps_scopes(wx_code *code, const void *compile_info, const jvmtiAddrLocationMap *map,
                     jint map_length)
{
    uint32_t cap = compile_info ? count_inline_pcs(compile_info) : 0, cap_frames = 0, n = 0;
    for (const jvmtiCompiledMethodLoadRecordHeader *h = compile_info; h; h = h->next)
        if (h->kind == JVMTI_CMLR_INLINE_INFO)
            for (jint i = 0; i < ((const jvmtiCompiledMethodLoadInlineRecord *)h)->numpcs; i++)
                cap_frames += (uint32_t)((const jvmtiCompiledMethodLoadInlineRecord *)h)->pcinfo[i].numstackframes;
    if (cap == 0 && map_length > 0)
        cap = cap_frames = (uint32_t)map_length;
    wx_scope *s = malloc(sizeof(*s) * (cap ? cap : 1));
    wx_frame *f = malloc(sizeof(*f) * (cap_frames ? cap_frames : 1));
    code->scopes = s;
    code->frames = f;
    code->nscopes = code->nframes = 0;
    if (!s || !f)
        return -1;
    if (compile_info)
        n = (uint32_t)exact_inline_scopes(code, compile_info, s, f, cap_frames);
    for (jint i = 0; n == 0 && map && i < map_length; i++) {
        uint64_t pc = (uint64_t)(uintptr_t)map[i].start_address;
        if (pc >= code->start && pc <= code->end) {
            f[n] = (wx_frame){ code->method, (uint64_t)(int64_t)map[i].location, WX_FRAME_JMETHOD };
            s[n] = (wx_scope){ (uint32_t)(pc - code->start), 1, n };
            n++;
            code->nframes = n;
        }
    }
    /* PcDescs come sorted; the tool's lookup relies on it, so make sure. */
    qsort(s, n, sizeof(*s), by_scope_offset);
    code->nscopes = n;
    return 0;
}

/* Live code may be recompiled away at any time: let the kernel copy it.
 * The blob may die between the caller's look and this one, and a dead blob
 * has no bytes when they could not be saved at its unload (out of memory):
 * dead and saved are read once, here. */
static uint8_t *copy_code(const code_blob *b)
{
    size_t size = b->end - b->start;
    uint8_t *bytes = malloc(size);
    const uint8_t *saved;
    if (!bytes)
        return NULL;
    if (__atomic_load_n(&b->dead, __ATOMIC_ACQUIRE)) {
        saved = __atomic_load_n(&b->saved, __ATOMIC_ACQUIRE);
        if (saved) {
            memcpy(bytes, saved, size);
            return bytes;
        }
    } else if (memread(gettid(), b->start, bytes, size) == 0) {
        return bytes;
    }
    free(bytes);
    return NULL;
}

/* A scope record covers the code after the previous record up to itself. */
static int describe_lines(const code_blob *b, prof_code *out)
{
    out->lines = calloc(b->nscopes ? b->nscopes : 1, sizeof(*out->lines));
    if (!out->lines)
        return -1;
    for (uint32_t i = 0; i < b->nscopes; i++) {
        uint32_t offset = i ? b->scopes[i - 1].offset + 1 : 0;
        /* Offsets must rise strictly and stay inside the code (a record may
         * sit at its very end, two scopes may end at one pc). */
        if (offset >= out->size || (out->nlines && offset <= out->lines[out->nlines - 1].offset))
            continue;
        prof_code_line *l = &out->lines[out->nlines++];
        l->offset = offset;
        jvm_name_method((jmethodID)(uintptr_t)b->scopes[i].method, b->scopes[i].bci, &l->function,
                        &l->file, &l->line);
        if (!l->file)
            l->file = strdup("");
    }
    return 0;
}

/* The blob an instruction pseudo-frame was captured in (its id survives
 * recompilation), or the live code at its pc. */
static const code_blob *blob_of(frame_key insn)
{
    const code_blob *b = codemap_blob((uint32_t)FRAME_AUX_DATA(insn.aux));
    return b && b->start <= insn.id && insn.id < b->end ? b : NULL;
}

size_t jcode_instruction(frame_key insn, char *buf, size_t len)
{
    const code_blob *b = blob_of(insn);
    size_t insn_len;
    if (!b || !b->dead)
        return decode_format(insn.id, 0, buf, len);
    if (!b->saved) {
        snprintf(buf, len, "(code unloaded)");
        return strlen(buf);
    }
    return decode_format_bytes(b->saved + (insn.id - b->start), (size_t)(b->end - insn.id), insn.id, 0,
                               buf, len, &insn_len);
}

int jcode_describe(frame_key insn, prof_code *out)
{
    const code_blob *b = blob_of(insn);
    char *file = NULL;
    uint32_t line;
    if (!b || b->kind != CODE_JIT || (b->dead && !b->saved))
        return -1;
    memset(out, 0, sizeof(*out));
    out->start = b->start;
    out->size = (uint32_t)(b->end - b->start);
    out->bytes = copy_code(b);
    if (!out->bytes)
        return -1;
    jvm_name_method((jmethodID)(uintptr_t)b->method, -1, &out->name, &file, &line);
    free(file);
    if (describe_lines(b, out) == 0)
        return 0;
    free(out->bytes);
    free(out->name);
    return -1;
}

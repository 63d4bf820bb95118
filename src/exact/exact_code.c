/*
 * exact_code.c - the machine code of JIT-compiled methods, kept for the
 * profile's `code` and `codeline` records (docs/profile-format.md, "Code"),
 * so a report can show the disassembly around an access in JIT code.
 *
 * The bytes are copied when the agent reports the code (WX_CODE): HotSpot
 * may free and reuse the code long before the raw file is written. Copies
 * are bounded (CODE_BUDGET bytes in all; what does not fit is counted and
 * left out), and a copy no leaf context lies in is freed as soon as its
 * code is gone from the code map, so the budget holds the live code plus
 * the dead code that contexts refer to. Each leaf is tied to the copy it
 * was first seen in, and only when the copy's bytes at its pc are the
 * instruction the leaf saw: a report never shows other code than ran.
 *
 * Line tables are the agent's scopes as they were at load time; the Java
 * frames that name them are interned (and so named by the agent) only for
 * the codes that written leaves lie in, when the agent asks which frames
 * need names (exact_code_prepare): naming every scope of every compiled
 * method would cost the agent minutes under Valgrind.
 */
#include "exact.h"
#include "exact_requests.h"

#include "pub_tool_aspacemgr.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_vki.h"

#define CODE_BUDGET (32u << 20)     /* bytes of code and line tables kept in all */
#define CODE_MAX_SIZE (4u << 20)    /* a profile's largest code (PROFILE_CODE_MAX_SIZE) */

/* From this offset up to the next line's, the code is the scope of
 * (method, bci): the innermost frame, as the tool's contexts name it. */
typedef struct code_line {
    UInt offset;
    ULong method, bci;
} code_line;

typedef struct xcode {
    Addr start;
    UInt size;                 /* 0: a free slot */
    UChar *bytes;
    ULong method;              /* the compiled method (jmethodID) */
    UInt nlines;
    code_line *lines;
    UInt *jlines;              /* jframe of each line, once prepared */
    UInt jname;                /* jframe of (method, -1), once prepared */
    Bool used;                 /* a leaf lies in it: kept after its code is gone */
    Bool live;                 /* still in the code map */
} xcode;

static xcode *codes;           /* ids from 1; codes[0] unused */
static UInt ncodes = 1, cap_codes;
static UInt *free_ids;         /* released slots, reused first */
static UInt nfree, cap_free;
static ULong kept, left_out;   /* bytes (code and lines) */

static UInt *leaf_code;        /* leaf context -> code id, 0 when none */
static UInt cap_leaf_code;

static SizeT cost(const xcode *c)
{
    return (SizeT)c->size + (SizeT)c->nlines * sizeof(code_line);
}

/* Scope k covers [end of scope k-1, end of scope k) (the tool's lookup:
 * the first scope ending after an offset); runs of one frame are one line,
 * and what follows the last scope is the compiled method's own. */
static UInt lines_of(const wx_code *c, UInt size, code_line *out)
{
    UInt n = 0, from = 0;
    for (UInt k = 0; k < c->nscopes && from < size; k++) {
        const wx_scope *s = &c->scopes[k];
        UInt end = s->offset < size ? s->offset : size;
        if (end <= from)
            continue;
        ULong method = c->method, bci = (ULong)-1;
        if (s->nframes && s->first < c->nframes) {
            method = c->frames[s->first].method;
            bci = c->frames[s->first].bci;
        }
        if (!n || out[n - 1].method != method || out[n - 1].bci != bci)
            out[n++] = (code_line){ from, method, bci };
        from = end;
    }
    if (from < size && (!n || out[n - 1].method != c->method || out[n - 1].bci != (ULong)-1))
        out[n++] = (code_line){ from, c->method, (ULong)-1 };
    return n;
}

static UInt new_id(void)
{
    if (nfree)
        return free_ids[--nfree];
    if (ncodes >= cap_codes) {
        cap_codes = cap_codes ? cap_codes * 2 : 1024;
        codes = VG_(realloc)("wasp.code", codes, cap_codes * sizeof(xcode));
    }
    return ncodes++;
}

UInt exact_code_capture(const wx_code *c)
{
    UInt size = (UInt)(c->end - c->start);
    SizeT want = (SizeT)size + (SizeT)(c->nscopes + 1) * sizeof(code_line);
    if (c->kind != WX_JIT)
        return 0;
    if (c->end - c->start > CODE_MAX_SIZE || kept + want > CODE_BUDGET ||
        !VG_(am_is_valid_for_client)(c->start, size, VKI_PROT_READ)) {
        left_out += size;
        return 0;
    }
    UInt id = new_id();
    xcode *x = &codes[id];
    *x = (xcode){ .start = c->start, .size = size, .method = c->method, .live = True };
    x->bytes = VG_(malloc)("wasp.code", size);
    VG_(memcpy)(x->bytes, (const void *)c->start, size);
    x->lines = VG_(malloc)("wasp.code", (c->nscopes + 1) * sizeof(code_line));
    x->nlines = lines_of(c, size, x->lines);
    x->lines = VG_(realloc)("wasp.code", x->lines, (x->nlines ? x->nlines : 1) * sizeof(code_line));
    kept += cost(x);
    return id;
}

static void free_code(UInt id)
{
    xcode *x = &codes[id];
    kept -= cost(x);
    VG_(free)(x->bytes);
    VG_(free)(x->lines);
    VG_(free)(x->jlines);
    VG_(memset)(x, 0, sizeof *x);
    if (nfree == cap_free) {
        cap_free = cap_free ? cap_free * 2 : 256;
        free_ids = VG_(realloc)("wasp.code", free_ids, cap_free * sizeof(UInt));
    }
    free_ids[nfree++] = id;
}

void exact_code_release(UInt id)
{
    if (!id)
        return;
    codes[id].live = False;
    if (!codes[id].used)
        free_code(id);
}

void exact_code_leaf(UInt ctx, Addr pc, UInt id)
{
    UInt node, len;
    Addr leaf_pc;
    /* The last id also stands for every context past the table's end. */
    if (!id || ctx >= exact_opts.max_ctx || (ctx < cap_leaf_code && leaf_code[ctx]))
        return;
    const xcode *x = &codes[id];
    exact_leaf_info(ctx, &node, &leaf_pc, &len);
    if (leaf_pc != pc || pc < x->start || pc - x->start + len > x->size ||
        VG_(memcmp)(x->bytes + (pc - x->start), exact_leaf_bytes(ctx), len) != 0)
        return;
    if (ctx >= cap_leaf_code) {
        UInt cap = cap_leaf_code ? cap_leaf_code : 4096;
        while (cap <= ctx)
            cap *= 2;
        leaf_code = VG_(realloc)("wasp.code", leaf_code, cap * sizeof(UInt));
        VG_(memset)(leaf_code + cap_leaf_code, 0, (cap - cap_leaf_code) * sizeof(UInt));
        cap_leaf_code = cap;
    }
    leaf_code[ctx] = id;
    codes[id].used = True;
}

static void prepare(xcode *x)
{
    if (x->jlines)
        return;
    x->jname = exact_jframe(x->method, (ULong)-1, WX_FRAME_JMETHOD);
    x->jlines = VG_(malloc)("wasp.code", (x->nlines ? x->nlines : 1) * sizeof(UInt));
    for (UInt i = 0; i < x->nlines; i++)
        x->jlines[i] = exact_jframe(x->lines[i].method, x->lines[i].bci, WX_FRAME_JMETHOD);
}

void exact_code_prepare(void)
{
    UInt nl = exact_nleaves();
    UChar *leaf_used = VG_(calloc)("wasp.code", nl + 1, 1);
    exact_write_leaves_used(leaf_used);
    for (UInt c = 1; c < nl && c < cap_leaf_code; c++)
        if (leaf_used[c] && leaf_code[c])
            prepare(&codes[leaf_code[c]]);
    VG_(free)(leaf_used);
}

UInt exact_code_of_leaf(UInt ctx)
{
    UInt id = ctx < cap_leaf_code ? leaf_code[ctx] : 0;
    return id && codes[id].jlines ? id : 0;
}

UInt exact_code_ids(void)
{
    return ncodes;
}

void exact_code_info(UInt id, Addr *start, UInt *size, const UChar **bytes, UInt *jname)
{
    *start = codes[id].start;
    *size = codes[id].size;
    *bytes = codes[id].bytes;
    *jname = codes[id].jname;
}

UInt exact_code_nlines(UInt id)
{
    return codes[id].nlines;
}

void exact_code_line(UInt id, UInt i, UInt *offset, UInt *jframe)
{
    *offset = codes[id].lines[i].offset;
    *jframe = codes[id].jlines[i];
}

void exact_code_stats(ULong *kept_bytes, ULong *left_out_bytes)
{
    *kept_bytes = kept;
    *left_out_bytes = left_out;
}

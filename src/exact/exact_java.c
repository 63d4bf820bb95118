/*
 * exact_java.c - Java programs under the exact tool: what the agent's
 * maps-only mode says (src/jvm/exactmaps.c, through client requests: Java
 * threads, generated code with its inlining, GCs, names at VM death), and
 * the Java calling context of an access.
 *
 * Contexts come from the frame-pointer chain (the CLI starts the JVM with
 * -XX:+PreserveFramePointer, so compiled frames keep rbp as interpreted
 * frames always do), read at the access:
 *   - a pc in JIT code is the compiled method's scope at that pc, with its
 *     inlined frames (the agent's copy of HotSpot's PcDescs, as they were
 *     when that code was loaded, so reused code addresses never mix);
 *   - a pc in the interpreter is the frame's Method* (rbp - 24) and its
 *     bytecode pointer (r13 in the leaf frame, saved at rbp - 64 in its
 *     callers), which the agent turns into a method and a line;
 *   - other code (stubs, the JVM's C++, libc) adds no frame: an access
 *     there is attributed to the innermost Java frame above it, with its
 *     own instruction, as AsyncGetCallTrace attributes a sample there.
 * Walking costs two loads per frame; what the chain resolves to is kept
 * per thread and reused for the part (from the root) that did not change,
 * so a loop pays for its leaf frame only.
 */
#include "exact.h"
#include "exact_requests.h"

#include "pub_tool_aspacemgr.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_tooliface.h"
#include "valgrind.h"

#define JTAG (1ULL << 63)                 /* node keys of Java frames (pcs never have it) */
#define INTERP_METHOD_SLOT 24             /* rbp - 24: the interpreter frame's Method* (x86-64) */
#define INTERP_BCP_SLOT 64                /* rbp - 64: its saved bytecode pointer */
#define OUTSIDE_JAVA_KEY ((Addr)1)        /* leaf key of code that adds no Java frame */

typedef struct blob {
    Addr start, end;
    UInt kind;
    ULong method;
    UInt nscopes;
    wx_scope *scopes;
    wx_frame *frames;
    UInt code;          /* its bytes' copy (exact_code.c), 0 when none */
} blob;

/* Live code, sorted by start; a new blob replaces any it overlaps. */
static blob *blobs;
static UInt nblobs, cap_blobs;
static Addr interp_lo, interp_hi;
static Bool vm_dead;
UInt exact_java_generation = 1;          /* changes with the code map: caches keyed on pcs go */

/* Names of Java frames (exact_tables.c interns them), from the agent at VM death. */
static struct { HChar *function, *file; UInt line; } *names;
static UInt nnames;

/* ---- code map ---- */

static UInt first_after(Addr a)   /* index of the first blob with start > a */
{
    UInt lo = 0, hi = nblobs;
    while (lo < hi) {
        UInt mid = (lo + hi) / 2;
        if (blobs[mid].start <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static const blob *find_blob(Addr pc)
{
    UInt i = first_after(pc);
    return i && pc < blobs[i - 1].end ? &blobs[i - 1] : NULL;
}

static void blob_free(blob *b)
{
    exact_code_release(b->code);
    VG_(free)(b->scopes);
    VG_(free)(b->frames);
}

static void remove_at(UInt i)
{
    blob_free(&blobs[i]);
    VG_(memmove)(&blobs[i], &blobs[i + 1], (nblobs - i - 1) * sizeof(blob));
    nblobs--;
}

static void add_code(const wx_code *c)
{
    if (c->end <= c->start)
        return;
    exact_java_generation++;
    if (c->kind == WX_INTERPRETER) {
        interp_lo = c->start;
        interp_hi = c->end;
    }
    UInt i = first_after(c->start);
    if (i && blobs[i - 1].end > c->start)
        remove_at(--i);
    while (i < nblobs && blobs[i].start < c->end)
        remove_at(i);
    if (nblobs == cap_blobs) {
        cap_blobs = cap_blobs ? cap_blobs * 2 : 1024;
        blobs = VG_(realloc)("wasp.java", blobs, cap_blobs * sizeof(blob));
    }
    VG_(memmove)(&blobs[i + 1], &blobs[i], (nblobs - i) * sizeof(blob));
    nblobs++;
    blob *b = &blobs[i];
    *b = (blob){ c->start, c->end, (UInt)c->kind, c->method, (UInt)c->nscopes, NULL, NULL,
                 exact_code_capture(c) };
    if (c->nscopes && c->nframes) {
        b->scopes = VG_(malloc)("wasp.java", c->nscopes * sizeof(wx_scope));
        b->frames = VG_(malloc)("wasp.java", c->nframes * sizeof(wx_frame));
        VG_(memcpy)(b->scopes, c->scopes, c->nscopes * sizeof(wx_scope));
        VG_(memcpy)(b->frames, c->frames, c->nframes * sizeof(wx_frame));
        /* A record naming frames beyond the copy would read past it. */
        for (UInt k = 0; k < b->nscopes; k++)
            if (b->scopes[k].first + b->scopes[k].nframes > c->nframes)
                b->scopes[k].nframes = 0;
    } else {
        b->nscopes = 0;
    }
}

static void unload_code(Addr start)
{
    UInt i = first_after(start);
    if (i && blobs[i - 1].start == start && blobs[i - 1].kind == WX_JIT) {
        exact_java_generation++;
        remove_at(i - 1);
    }
}

/* ---- frames ---- */

static UInt java_node(UInt parent, ULong method, ULong bci, UInt kind)
{
    return exact_node_child(parent, JTAG | exact_jframe(method, bci, kind));
}

/* The nodes of the frames at pc (an instruction; for callers, the return
 * address minus one), below parent. */
static UInt intern_frames(UInt parent, Addr pc, Addr fp, Addr bcp, const exact_thread *t)
{
    if (pc >= interp_lo && pc < interp_hi) {
        if (fp < INTERP_BCP_SLOT || fp >= t->stack_hi || fp < t->stack_lo)
            return parent;
        return java_node(parent, *(const ULong *)(fp - INTERP_METHOD_SLOT), bcp, WX_FRAME_INTERPRETED);
    }
    const blob *b = find_blob(pc);
    if (!b || b->kind != WX_JIT)
        return parent;
    UInt lo = 0, hi = b->nscopes, off = (UInt)(pc - b->start);
    while (lo < hi) {   /* the first scope ending after off */
        UInt mid = (lo + hi) / 2;
        if (b->scopes[mid].offset <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == b->nscopes || !b->scopes[lo].nframes)
        return java_node(parent, b->method, (ULong)-1, WX_FRAME_JMETHOD);
    const wx_scope *s = &b->scopes[lo];
    for (UInt k = s->nframes; k-- > 0;)
        parent = java_node(parent, b->frames[s->first + k].method, b->frames[s->first + k].bci,
                           WX_FRAME_JMETHOD);
    return parent;
}

static Bool interpreted(Addr pc)
{
    return pc >= interp_lo && pc < interp_hi;
}

/* The leaf ctx at pc gets the copy of the JIT code pc lies in. */
static void leaf_code(UInt ctx, Addr pc)
{
    const blob *b = find_blob(pc);
    if (b && b->kind == WX_JIT)
        exact_code_leaf(ctx, pc, b->code);
}

/* The frame-pointer chain above an access: level 0 is the access, level k
 * the k-th return address with its frame pointer (and saved bytecode
 * pointer when it returns into the interpreter). */
static UInt walk(exact_thread *t, Addr pc, Addr sp, Addr fp, Addr r13, exact_jlevel *lv)
{
    UInt n = 1;
    lv[0] = (exact_jlevel){ pc, fp, interpreted(pc) ? r13 : 0, 0 };
    for (Addr f = fp, lo = sp; n < EXACT_JAVA_DEPTH && f >= lo && f + 16 <= t->stack_hi && !(f & 7);) {
        Addr ra = ((const Addr *)f)[1], next = ((const Addr *)f)[0];
        Bool next_ok = next > f && next + 16 <= t->stack_hi && !(next & 7);
        lv[n++] = (exact_jlevel){ ra, next, next_ok && interpreted(ra) ? *(const Addr *)(next - INTERP_BCP_SLOT) : 0, 0 };
        if (!next_ok)
            break;
        lo = f + 16;
        f = next;
    }
    return n;
}

static Bool same_level(const exact_jlevel *a, const exact_jlevel *b)
{
    return a->pc == b->pc && a->fp == b->fp && a->bcp == b->bcp;
}

/* Leaves whose pc was in no known code when first seen: HotSpot reports
 * new JIT code from its service thread, after the code may have started
 * running (under Valgrind, long after, with several threads). At VM death
 * the code map is complete and they get their Java frames (late_leaves).
 * (Resolving them when their code is reported instead named such a leaf
 * exactly as the leaves made after it, and exact_java.sh's threads@17 then
 * found its planted pair twice: the CLI does not merge equal contexts.)
 * Only pcs that may be such code are kept: anonymous memory that no known
 * blob covers (the VM's C++ and libc never will be); the list used to grow
 * with every leaf-cache miss there. */
static UInt *unresolved;
static UInt nunresolved, cap_unresolved;

static Bool may_be_unreported_code(Addr pc)
{
    if (interpreted(pc) || find_blob(pc))
        return False;
    const NSegment *seg = VG_(am_find_nsegment)(pc);
    return seg && seg->kind == SkAnonC;
}

static void remember_unresolved(UInt ctx)
{
    if (nunresolved && unresolved[nunresolved - 1] == ctx)
        return;
    if (nunresolved == cap_unresolved) {
        cap_unresolved = cap_unresolved ? cap_unresolved * 2 : 1024;
        unresolved = VG_(realloc)("wasp.java", unresolved, cap_unresolved * sizeof(UInt));
    }
    unresolved[nunresolved++] = ctx;
}

/* Before the agent names frames: every such leaf now in JIT code gets that
 * code's frames below its callers (the frames it lacked). */
static Int by_id(const void *a, const void *b)
{
    UInt x = *(const UInt *)a, y = *(const UInt *)b;
    return x < y ? -1 : x > y;
}

static void late_leaves(void)
{
    static const exact_thread none;
    /* A leaf is remembered at each cache miss: resolve it once. */
    VG_(ssort)(unresolved, nunresolved, sizeof(UInt), by_id);
    for (UInt i = 0; i < nunresolved; i++) {
        if (i && unresolved[i] == unresolved[i - 1])
            continue;
        UInt node, len;
        Addr pc;
        exact_leaf_info(unresolved[i], &node, &pc, &len);
        UInt resolved = intern_frames(node, pc, 0, 0, &none);
        if (resolved != node) {
            exact_leaf_set_node(unresolved[i], resolved);
            leaf_code(unresolved[i], pc);
        }
    }
    nunresolved = 0;
}

/* The leaf context of a Java thread's access. */
UInt exact_java_leaf(exact_thread *t, Addr pc, UInt len, Addr sp, Addr fp, Addr r13)
{
    exact_jlevel lv[EXACT_JAVA_DEPTH];
    UInt n = walk(t, pc, sp, fp, r13, lv);
    if (t->jgen != exact_java_generation) {
        t->jgen = exact_java_generation;
        t->jn = 0;
        VG_(memset)(t->jleaf, 0, sizeof t->jleaf);
    }
    /* Levels that match the last walk from the root keep its nodes. */
    Int i = (Int)n - 1, j = (Int)t->jn - 1;
    while (i >= 1 && j >= 1 && same_level(&lv[i], &t->jm[j])) {
        lv[i].node = t->jm[j].node;
        i--, j--;
    }
    for (; i >= 1; i--)
        lv[i].node = intern_frames(i + 1 < (Int)n ? lv[i + 1].node : 0, lv[i].pc - 1, lv[i].fp, lv[i].bcp, t);
    VG_(memcpy)(t->jm, lv, n * sizeof(exact_jlevel));
    t->jn = n;
    UInt parent = n > 1 ? lv[1].node : 0;
    UInt h = (UInt)((pc ^ (pc >> 9) ^ lv[0].bcp ^ ((Addr)parent * 0x9E37u)) & (EXACT_JLEAF_CACHE - 1));
    if (t->jleaf[h].ctx && t->jleaf[h].pc == pc && t->jleaf[h].node == parent && t->jleaf[h].bcp == lv[0].bcp)
        return t->jleaf[h].ctx;
    UInt node = intern_frames(parent, pc, fp, lv[0].bcp, t);
    /* The interpreter's own instructions (a bytecode's template) are one
     * leaf per bytecode: one per template instruction made a JVM's start-up
     * alone exceed the 2 M contexts a 32-bit shadow state named (silent-load).
     * Code that adds no Java frame (the VM's C++, stubs, libc, JNI code)
     * below a Java frame is one leaf per Java caller: its contexts differ
     * from the caller's only by the instruction, which reports do not tell
     * apart (merge.h), and one leaf per instruction of the VM's under every
     * Java path filled the 8 M-context table in silent-load runs. With no
     * Java frame found (parent 0) the pc names the leaf (a native frame). */
    Bool unreported = node == parent && may_be_unreported_code(pc);
    UInt ctx = interpreted(pc) && node != parent       ? exact_leaf_at(node, interp_lo, 0)
             : node == parent && parent && !unreported ? exact_leaf_keyed(node, OUTSIDE_JAVA_KEY, pc, len)
                                                       : exact_leaf_at(node, pc, len);
    Bool named = ctx != exact_opts.max_ctx;   /* past the table: no leaf to resolve */
    if (named && unreported)
        remember_unresolved(ctx);
    else if (named && node != parent && !interpreted(pc))
        leaf_code(ctx, pc);
    t->jleaf[h].pc = pc;
    t->jleaf[h].node = parent;
    t->jleaf[h].bcp = lv[0].bcp;
    t->jleaf[h].ctx = ctx;
    return ctx;
}

void exact_java_stop(void)
{
    vm_dead = True;
}

/* Whether the agent has announced a Java thread: the VM is initialized. */
static Bool started;
static Bool cut_requested;

void exact_java_cut(void)
{
    cut_requested = True;
    vm_dead = True;
}

Bool exact_java_started(void)
{
    return started;
}

Bool exact_java_watched(const exact_thread *t)
{
    return t->java && !vm_dead;
}

/* ---- names ---- */

Bool exact_java_key(Addr key, UInt *jframe)
{
    if (!(key & JTAG))
        return False;
    *jframe = (UInt)(key & ~JTAG);
    return True;
}

void exact_java_name(UInt jframe, const HChar **function, const HChar **file, UInt *line)
{
    if (jframe < nnames && names[jframe].function) {
        *function = names[jframe].function;
        *file = names[jframe].file;
        *line = names[jframe].line;
    } else {
        *function = "[unknown Java method]";
        *file = "";
        *line = 0;
    }
}

static UWord needed(wx_frame *buf, UWord cap)
{
    /* From here on the agent names frames: its own work (JVMTI, on a Java
     * thread) must not make contexts that nobody will name. */
    vm_dead = True;
    late_leaves();
    exact_code_prepare();
    UInt n = exact_njframes();
    for (UInt i = 0; buf && i < n && i < cap; i++) {
        UInt kind;
        exact_jframe_info(i, &buf[i].method, &buf[i].bci, &kind);
        buf[i].kind = kind;
    }
    return n;
}

static void set_name(UWord i, const HChar *function, const HChar *file, UWord line)
{
    UInt n = exact_njframes();
    if (i >= n)
        return;
    if (!names) {
        names = VG_(calloc)("wasp.java", n, sizeof(*names));
        nnames = n;
    }
    if (i >= nnames)
        return;
    names[i].function = VG_(strdup)("wasp.java", function);
    names[i].file = VG_(strdup)("wasp.java", file);
    names[i].line = (UInt)line;
}

Bool exact_java_request(ThreadId tid, UWord *arg, UWord *ret)
{
    if (!VG_IS_TOOL_USERREQ('W', 'X', arg[0]))
        return False;
    *ret = 0;
    switch (arg[0]) {
    case WX_HELLO:
        *ret = exact_opts.java ? WX_VERSION : 0;
        break;
    case WX_THREAD: {
        exact_thread *t = exact_thread_of(tid);
        t->java = arg[1] != 0;
        /* A thread that leaves having watched nothing (the agent's own
         * poller) gets no profile. */
        t->was_java = t->java || (t->was_java && t->stats[XS_ACCESSES]);
        started |= t->java;
        break;
    }
    case WX_CODE:
        add_code((const wx_code *)arg[1]);
        break;
    case WX_UNLOAD:
        unload_code(arg[1]);
        break;
    case WX_GC:
        exact_shadow_clear();
        break;
    case WX_NEEDED:
        *ret = needed((wx_frame *)arg[1], arg[2]);
        break;
    case WX_NAME:
        set_name(arg[1], (const HChar *)arg[2], (const HChar *)arg[3], arg[4]);
        break;
    case WX_DEATH:
        vm_dead = True;
        break;
    case WX_POLL:
        *ret = cut_requested;
        break;
    case WX_CUT_DONE:
        exact_write_raw("limit");
        VG_(exit)(0);
        break;
    default:
        return False;
    }
    return True;
}

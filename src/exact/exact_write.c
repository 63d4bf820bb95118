/*
 * exact_write.c - the raw file of one process: every pair with its thread,
 * the contexts the pairs use, symbolized here (Valgrind's debug info is
 * loaded now; once the process is gone nobody can name its addresses), and
 * each leaf instruction's bytes, which the wasp CLI decodes (Zydis: text and
 * element type) when it turns this file into standard profiles
 * (src/cli/exact_convert.c, format in docs/how-it-works.md), and, for a
 * JVM, the JIT code those leaves ran in with its line table (exact_code.c).
 *
 * Written at exit, before an exec replaces the process, and when
 * --exact-limit cuts the run; always whole (temporary file, then rename).
 */
#include "exact.h"

#include "pub_tool_aspacemgr.h"
#include "pub_tool_clientstate.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_vki.h"
#include "pub_tool_xarray.h"

typedef struct wbuf {
    Int fd;
    Bool bad;
    UInt len;
    HChar data[1 << 16];
} wbuf;

static void w_flush(wbuf *w)
{
    if (w->len && VG_(write)(w->fd, w->data, (Int)w->len) != (Int)w->len)
        w->bad = True;
    w->len = 0;
}

static void w_char(wbuf *w, HChar ch)
{
    if (w->len == sizeof w->data)
        w_flush(w);
    w->data[w->len++] = ch;
}

static void w_raw(wbuf *w, const HChar *s)
{
    for (; *s; s++)
        w_char(w, *s);
}

/* TAB, then s with \, TAB, LF and CR escaped (as profile files do). */
static void w_field(wbuf *w, const HChar *s)
{
    w_char(w, '\t');
    for (; s && *s; s++) {
        if (*s == '\\') w_raw(w, "\\\\");
        else if (*s == '\t') w_raw(w, "\\t");
        else if (*s == '\n') w_raw(w, "\\n");
        else if (*s == '\r') w_raw(w, "\\r");
        else w_char(w, *s);
    }
}

static void w_num(wbuf *w, const HChar *fmt, ULong v)
{
    HChar tmp[40];
    VG_(snprintf)(tmp, sizeof tmp, fmt, v);
    w_raw(w, tmp);
}

/* The innermost inlined function at pc, into buf, or NULL when pc is not
 * in inlined code. The sampled mode's symbolizer names a frame by the
 * inlined callee (DWARF's DW_AT_name), and reports match frames by name;
 * Valgrind says it only through describe_IP's text, "0x...: NAME (FILE:LINE)"
 * or "0x...: NAME (in OBJECT)". */
static const HChar *inlined_name(DiEpoch ep, Addr pc, HChar *buf, SizeT len)
{
    InlIPCursor *c = VG_(new_IIPC)(ep, pc);
    const HChar *text = VG_(describe_IP)(ep, pc, c);
    const HChar *start = text ? VG_(strstr)(text, ": ") : NULL;
    Bool inlined = c && VG_(next_IIPC)(c);
    VG_(delete_IIPC)(c);
    if (!inlined || !start)
        return NULL;
    start += 2;
    const HChar *end = VG_(strstr)(start, " (");
    SizeT n = end ? (SizeT)(end - start) : VG_(strlen)(start);
    if (n == 0 || n >= len)
        return NULL;
    VG_(memcpy)(buf, start, n);
    buf[n] = '\0';
    return buf;
}

/* function, file, line, module of pc, as the code at pc was in debug-info
 * epoch epoch (the library may have been unloaded since, and its addresses
 * reused). */
static void w_symbol(wbuf *w, Addr pc, UInt epoch)
{
    DiEpoch ep = { epoch };
    const HChar *fn = NULL, *file = NULL, *dir = NULL, *obj = NULL;
    UInt line = 0;
    HChar unnamed[300], inl[300];
    if (!VG_(get_objname)(ep, pc, &obj))
        obj = "";
    HChar *module = VG_(strdup)("wasp.sym", obj);
    if ((fn = inlined_name(ep, pc, inl, sizeof inl)) != NULL) {
    } else if (!VG_(get_fnname)(ep, pc, &fn) || !fn[0]) {
        /* As the native front end names them: "[libc.so.6+0x2724a]". */
        DebugInfo *di = VG_(find_DebugInfo)(ep, pc);
        const HChar *slash = VG_(strrchr)(module, '/');
        ULong off = di ? (ULong)(pc - (Addr)VG_(DebugInfo_get_text_bias)(di)) : (ULong)pc;
        VG_(snprintf)(unnamed, sizeof unnamed, "[%s+0x%llx]", slash ? slash + 1 : module, off);
        fn = unnamed;
    }
    w_field(w, fn);
    if (!VG_(get_filename_linenum)(ep, pc, &file, &dir, &line)) {
        file = "";
        line = 0;
    }
    const HChar *slash = VG_(strrchr)(file, '/');
    w_field(w, slash ? slash + 1 : file);
    w_num(w, "\t%llu", line);
    w_field(w, module);
    VG_(free)(module);
}

/* The functions that inlined the code at pc, innermost first, each at the
 * line of its call, as the sampled mode's symbolizer names them
 * (src/native/symbols.c): one frame per function, so that reports and
 * `wasp diff` match the two modes' contexts. Valgrind gives each level
 * through describe_IP's text at the cursor, "0x...: NAME (FILE:LINE)". */
#define MAX_INLINED 16   /* as ENGINE_MAX_INLINED, less the innermost */

typedef struct inlined_level {
    HChar function[256], file[256];
    UInt line;
} inlined_level;

static Bool parse_level(const HChar *text, inlined_level *l)
{
    const HChar *start = text ? VG_(strstr)(text, ": ") : NULL, *open = NULL, *colon = NULL;
    if (!start)
        return False;
    start += 2;
    for (const HChar *s = VG_(strstr)(start, " ("); s; s = VG_(strstr)(s + 1, " ("))
        open = s;
    SizeT n = open ? (SizeT)(open - start) : VG_(strlen)(start);
    if (n == 0 || n >= sizeof l->function)
        return False;
    VG_(memcpy)(l->function, start, n);
    l->function[n] = '\0';
    l->file[0] = '\0';
    l->line = 0;
    if (open && VG_(strncmp)(open, " (in ", 5) != 0 && (colon = VG_(strrchr)(open, ':')) != NULL) {
        SizeT f = (SizeT)(colon - open - 2);
        if (f < sizeof l->file) {
            VG_(memcpy)(l->file, open + 2, f);
            l->file[f] = '\0';
            l->line = (UInt)VG_(strtoll10)(colon + 1, NULL);
        }
    }
    return True;
}

static UInt inlining_callers(Addr pc, UInt epoch, inlined_level *out)
{
    DiEpoch ep = { epoch };
    InlIPCursor *c = VG_(new_IIPC)(ep, pc);
    UInt n = 0;
    if (!c)
        return 0;
    VG_(describe_IP)(ep, pc, c);   /* the innermost: w_symbol's */
    while (n < MAX_INLINED && VG_(next_IIPC)(c))
        n += parse_level(VG_(describe_IP)(ep, pc, c), &out[n]);
    VG_(delete_IIPC)(c);
    return n;
}

/* Nodes for the functions that inlined the code at pc, outermost first,
 * under parent, numbered on from *next_id: the node or leaf for pc itself
 * goes under the id returned. */
static UInt w_inlining_nodes(wbuf *w, Addr pc, UInt epoch, UInt parent, UInt *next_id)
{
    static inlined_level levels[MAX_INLINED];   /* not on the tool's stack */
    const HChar *obj = NULL;
    DiEpoch ep = { epoch };
    UInt n = inlining_callers(pc, epoch, levels);
    if (n && !VG_(get_objname)(ep, pc, &obj))
        obj = "";
    while (n--) {
        w_num(w, "node\t%llu", ++*next_id);
        w_num(w, "\t%llu", parent);
        w_num(w, "\t0x%llx", pc);
        w_field(w, levels[n].function);
        w_field(w, levels[n].file);
        w_num(w, "\t%llu", levels[n].line);
        w_field(w, obj);
        w_char(w, '\n');
        parent = *next_id;
    }
    return parent;
}

/* TAB, then len bytes in hex. */
static void w_hex(wbuf *w, const UChar *b, UInt len)
{
    static const HChar hex[] = "0123456789abcdef";
    w_char(w, '\t');
    for (UInt i = 0; i < len; i++) {
        w_char(w, hex[b[i] >> 4]);
        w_char(w, hex[b[i] & 15]);
    }
}

/* function, file, line, module of a Java frame (module: none, as the
 * sampled JVM front end writes them). */
static void w_java_symbol(wbuf *w, UInt jframe)
{
    const HChar *fn, *file;
    UInt line;
    exact_java_name(jframe, &fn, &file, &line);
    w_field(w, fn);
    w_field(w, file);
    w_num(w, "\t%llu", line);
    w_field(w, "");
}

static void w_header(wbuf *w, const HChar *why)
{
    static const HChar *const modes[] = { "dead-store", "silent-store", "silent-load" };
    w_raw(w, "wasp-exact\t2\nmode");
    w_field(w, modes[exact_opts.mode]);
    w_num(w, "\npid\t%llu\ncommand", (ULong)VG_(getpid)());
    w_field(w, VG_(args_the_exename));
    for (Word i = 0; i < VG_(sizeXA)(VG_(args_for_client)); i++) {
        w_char(w, ' ');
        w_raw(w, *(HChar **)VG_(indexXA)(VG_(args_for_client), i));
    }
    w_raw(w, "\nfp_tolerance");
    w_field(w, exact_opts.fp_tolerance_text);
    w_raw(w, "\nwritten");
    w_field(w, why);
    w_num(w, "\ninstructions\t%llu", exact_cut_insns ? exact_cut_insns : exact_insns);
    w_num(w, "\ncut\t%llu", exact_limit_hit);
    w_num(w, "\ncontexts\t%llu\n", (ULong)exact_nleaves() - 1);   /* leaf ids start at 1 */
    if (exact_opts.java) {
        ULong kept, left_out;
        exact_code_stats(&kept, &left_out);
        w_num(w, "code_kept\t%llu\n", kept);
        w_num(w, "code_left_out\t%llu\n", left_out);
    }
}

static void w_threads(wbuf *w)
{
    static const HChar *const names[XS_COUNT] = {
        "accesses", "pairs", "drop.cross_thread", "drop.stack", "drop.stack_probe", "drop.table_full"
    };
    for (UInt i = 1; i <= exact_nthreads; i++) {
        const exact_thread *t = exact_threads[i];
        /* A JVM's own threads (GC, compilers) are not watched: no profile. */
        if (!t || (exact_opts.java && !t->was_java))
            continue;
        w_num(w, "thread\t%llu", i);
        w_num(w, "\t%llu\n", (ULong)t->os_tid);
        for (UInt s = 0; s < XS_COUNT; s++) {
            w_num(w, "stat\t%llu", i);
            w_field(w, names[s]);
            w_num(w, "\t%llu\n", t->stats[s]);
        }
    }
}

/* Pairs below this share of the process's monitored bytes, with no
 * approximately silent bytes, are written as one "fold" record per thread
 * instead of with their contexts: the CLI folds them anyway
 * (exact_convert.c, the same share), and a JVM under the exact mode makes
 * millions (its start-up's interpreted code, one context per bytecode),
 * which made raw files of 300 MB. Pairs with approximate bytes stay whole:
 * whether those count depends on their C1's element type, which only the
 * CLI decodes. */
#define FOLD_SHARE 1e-5

static ULong fold_below;

static Bool folded(const exact_pair *p)
{
    return p->bytes < fold_below && !p->approx64 && !p->approx32;
}

/* A pair with a context past the table (EXACT_MAX_CTX) has no leaf to name. */
static Bool unnamed(const exact_pair *p)
{
    return p->c1 == exact_opts.max_ctx || p->c2 == exact_opts.max_ctx;
}

static void set_fold_below(void)
{
    ULong total = 0;
    for (UInt s = 0; s < exact_npairs_cap(); s++)
        if (exact_pair_at(s))
            total += exact_pair_at(s)->bytes;
    fold_below = (ULong)((double)total * FOLD_SHARE);
}

void exact_write_leaves_used(UChar *leaf_used)
{
    set_fold_below();
    for (UInt s = 0; s < exact_npairs_cap(); s++) {
        const exact_pair *p = exact_pair_at(s);
        if (!p || folded(p) || unnamed(p))
            continue;
        leaf_used[p->c1] = 1;
        leaf_used[p->c2] = 1;
    }
}

/* Marks the leaves pairs use, and every node on their caller chains. */
static void mark_used(UChar *leaf_used, UChar *node_used)
{
    exact_write_leaves_used(leaf_used);
    for (UInt c = 1; c < exact_nleaves(); c++) {
        UInt node, len;
        Addr pc;
        if (!leaf_used[c])
            continue;
        exact_leaf_info(c, &node, &pc, &len);
        while (node && !node_used[node]) {
            node_used[node] = 1;
            exact_node_info(node, &node, &pc);
        }
    }
}

/* code <id> <name> <start> <hex>, then its codelines <id> <offset> <line>
 * <function> <file>: the JIT code a written leaf lies in, once. */
static void w_code(wbuf *w, UInt code, UInt out)
{
    Addr start;
    UInt size, jname, offset, jframe, line;
    const UChar *bytes;
    const HChar *fn, *file;
    exact_code_info(code, &start, &size, &bytes, &jname);
    exact_java_name(jname, &fn, &file, &line);
    w_num(w, "code\t%llu", out);
    w_field(w, fn);
    w_num(w, "\t0x%llx", start);
    w_hex(w, bytes, size);
    w_char(w, '\n');
    for (UInt i = 0; i < exact_code_nlines(code); i++) {
        exact_code_line(code, i, &offset, &jframe);
        exact_java_name(jframe, &fn, &file, &line);
        w_num(w, "codeline\t%llu", out);
        w_num(w, "\t%llu", offset);
        w_num(w, "\t%llu", line);
        w_field(w, fn);
        w_field(w, file);
        w_char(w, '\n');
    }
}

/* Writes the codes of the used leaves; returns their ids in the file
 * (from 1; 0 for none), by code id, or NULL when there are none. */
static UInt *w_codes(wbuf *w, const UChar *leaf_used)
{
    UInt *out = NULL, n = 0;
    for (UInt c = 1; c < exact_nleaves(); c++) {
        UInt code = leaf_used[c] ? exact_code_of_leaf(c) : 0;
        if (!code)
            continue;
        if (!out)
            out = VG_(calloc)("wasp.write", exact_code_ids(), sizeof(UInt));
        if (!out[code]) {
            out[code] = ++n;
            w_code(w, code, n);
        }
    }
    return out;
}

/* Codes, then nodes, come before the nodes and leaves that refer to them
 * (ids grow). Node ids are renumbered: a call site in inlined code is a
 * node per function (w_inlining_nodes). */
static void w_contexts(wbuf *w)
{
    UInt nl = exact_nleaves(), nn = exact_nnodes(), jframe, next_id = 0;
    UChar *leaf_used = VG_(calloc)("wasp.write", nl + 1, 1);
    UChar *node_used = VG_(calloc)("wasp.write", nn + 1, 1);
    UInt *out_id = VG_(calloc)("wasp.write", nn + 1, sizeof(UInt));
    mark_used(leaf_used, node_used);
    UInt *code_out = w_codes(w, leaf_used);
    for (UInt n = 1; n < nn; n++) {
        UInt parent;
        Addr pc;
        if (!node_used[n])
            continue;
        exact_node_info(n, &parent, &pc);
        parent = parent ? out_id[parent] : 0;
        Bool java = exact_java_key(pc, &jframe);
        if (!java)
            parent = w_inlining_nodes(w, pc, exact_node_epoch(n), parent, &next_id);
        out_id[n] = ++next_id;
        w_num(w, "node\t%llu", next_id);
        w_num(w, "\t%llu", parent);
        if (java) {
            w_raw(w, "\t0");
            w_java_symbol(w, jframe);
        } else {
            w_num(w, "\t0x%llx", pc);
            w_symbol(w, pc, exact_node_epoch(n));
        }
        w_char(w, '\n');
    }
    for (UInt c = 1; c < nl; c++) {
        UInt node, len;
        Addr pc;
        if (!leaf_used[c])
            continue;
        exact_leaf_info(c, &node, &pc, &len);
        /* A Java leaf is its innermost Java frame, with the instruction in it. */
        UInt parent = 0;
        Addr key = 0;
        if (node)
            exact_node_info(node, &parent, &key);
        Bool java = node && exact_java_key(key, &jframe);
        UInt under = java ? (parent ? out_id[parent] : 0) : node ? out_id[node] : 0;
        if (!java)
            under = w_inlining_nodes(w, pc, exact_leaf_epoch(c), under, &next_id);
        w_num(w, "leaf\t%llu", c);
        w_num(w, "\t%llu", under);
        w_num(w, "\t0x%llx", pc);
        if (java)
            w_java_symbol(w, jframe);
        else
            w_symbol(w, pc, exact_leaf_epoch(c));
        /* The bytes as the leaf's instruction was when first seen (exact_tables.c). */
        w_hex(w, exact_leaf_bytes(c), len);
        w_num(w, "\t%llu\n", code_out ? code_out[exact_code_of_leaf(c)] : 0);
    }
    VG_(free)(leaf_used);
    VG_(free)(node_used);
    VG_(free)(out_id);
    VG_(free)(code_out);
}

/* Per thread sums of pairs written without contexts, as "fold" or "unnamed". */
static void w_sums(wbuf *w, const HChar *record, ULong (*sum)[3])
{
    for (UInt t = 1; t < EXACT_MAX_THREADS; t++) {
        if (!sum[t][0])
            continue;
        w_raw(w, record);
        w_num(w, "\t%llu", t);
        for (UInt k = 0; k < 3; k++)
            w_num(w, "\t%llu", sum[t][k]);
        w_char(w, '\n');
    }
}

static void w_pairs(wbuf *w)
{
    static ULong fold[EXACT_MAX_THREADS][3], lost[EXACT_MAX_THREADS][3];   /* not on the tool's stack */
    VG_(memset)(fold, 0, sizeof fold);
    VG_(memset)(lost, 0, sizeof lost);
    for (UInt s = 0; s < exact_npairs_cap(); s++) {
        const exact_pair *p = exact_pair_at(s);
        if (!p)
            continue;
        UInt t = p->tindex;
        if (folded(p) || unnamed(p)) {
            ULong *sum = unnamed(p) ? lost[t] : fold[t];
            sum[0] += p->count;
            sum[1] += p->bytes;
            sum[2] += p->wasteful;
            continue;
        }
        w_num(w, "pair\t%llu", t);
        w_num(w, "\t%llu", p->c1);
        w_num(w, "\t%llu", p->c2);
        w_num(w, "\t%llu", p->count);
        w_num(w, "\t%llu", p->bytes);
        w_num(w, "\t%llu", p->wasteful);
        w_num(w, "\t%llu", p->approx64);
        w_num(w, "\t%llu\n", p->approx32);
    }
    w_sums(w, "fold", fold);
    w_sums(w, "unnamed", lost);
}

/* dir/.exact/<pid>-<n>.raw, reserved on first write: a process writes
 * again over its own file (an exec that failed, then exit), while the
 * program an exec starts, with the same pid, takes the next n. */
static Int seq = -1;

/* A forked child writes a file of its own. */
void exact_write_forget(void)
{
    seq = -1;
}

static Bool raw_path(HChar *path, SizeT len)
{
    Int pid = VG_(getpid)();
    for (Int n = seq < 0 ? 0 : seq; n < 10000; n++) {
        VG_(snprintf)(path, len, "%s/.exact/%d-%d.raw", exact_opts.dir, pid, n);
        if (seq >= 0)
            return True;
        SysRes r = VG_(open)(path, VKI_O_CREAT | VKI_O_EXCL | VKI_O_WRONLY, 0644);
        if (!sr_isError(r)) {
            VG_(close)((Int)sr_Res(r));
            seq = n;
            return True;
        }
    }
    return False;
}

void exact_write_raw(const HChar *why)
{
    HChar path[4096], tmp[4200];
    if (!raw_path(path, sizeof path)) {
        exact_error("cannot create a file in the run directory's .exact folder — check that it is writable");
        return;
    }
    VG_(snprintf)(tmp, sizeof tmp, "%s.tmp", path);
    SysRes r = VG_(open)(tmp, VKI_O_CREAT | VKI_O_WRONLY | VKI_O_TRUNC, 0644);
    if (sr_isError(r)) {
        exact_error("cannot write a raw file in the run directory — check that it is writable");
        return;
    }
    wbuf *w = VG_(malloc)("wasp.write", sizeof(wbuf));
    w->fd = (Int)sr_Res(r);
    w->bad = False;
    w->len = 0;
    set_fold_below();
    w_header(w, why);
    w_threads(w);
    w_contexts(w);
    w_pairs(w);
    w_raw(w, "end\n");
    w_flush(w);
    VG_(close)(w->fd);
    if (w->bad || VG_(rename)(tmp, path) != 0) {
        exact_error("cannot write a raw file in the run directory (disk full?) — free space and run again");
        VG_(unlink)(tmp);
    }
    VG_(free)(w);
}

/*
 * exact.h - the exact mode's Valgrind tool ("wasp"): shared state.
 *
 * The tool runs inside Valgrind's core, not on glibc: it may only call
 * Valgrind's own library (VG_(...)), never libc, and includes no wasp
 * header. It sees every load and store of the program (exact_instrument.c),
 * pairs each access of the monitored kind with the next access to the same
 * bytes by the same thread through per-byte shadow state (exact_shadow.c),
 * keys contexts on a shadow call stack (exact_tables.c), keeps a JVM's JIT
 * code for the report's disassembly (exact_code.c), and writes one raw
 * file per process (exact_write.c) that the wasp CLI turns into standard
 * profiles (src/cli/exact_convert.c).
 */
#ifndef WASP_EXACT_H
#define WASP_EXACT_H

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"

enum exact_mode { EXACT_DEAD_STORE, EXACT_SILENT_STORE, EXACT_SILENT_LOAD };

/* Access kinds, as the instrumentation passes them to the helper. */
#define EXACT_LOAD 1u
#define EXACT_STORE 2u
#define EXACT_UNKNOWN_VALUE 4u   /* a dirty helper's access: bytes known, value not */

/* Shadow state of one byte, 0 when nothing is pending: the thread index
 * (low bits), whether its value is unknown, and the leaf context (a whole
 * UInt above them: 43 bits). */
#define EXACT_TID_BITS 10
#define EXACT_MAX_THREADS (1u << EXACT_TID_BITS)
#define EXACT_UNKNOWN_BIT (1u << EXACT_TID_BITS)
#define EXACT_CTX_SHIFT (EXACT_TID_BITS + 1)
#define EXACT_STATE_BITS (EXACT_CTX_SHIFT + 32)
/* Leaf contexts the tables name, ids 1..EXACT_MAX_CTX-1. A JVM makes one per
 * Java calling context and instruction, the VM's own code included, and
 * recursion 2^depth calling contexts: Rhino's start-up alone passed the 2 M a
 * 32-bit state could hold, and with no limit a whole run grew past 5.7 GB.
 * Past the limit (about 70 bytes of tables each) accesses keep pairing, under the one id
 * EXACT_MAX_CTX, which the profile names as contexts past the table. Tests
 * lower it with --wasp-max-contexts=N (through VALGRIND_OPTS). */
#define EXACT_MAX_CTX ((1u << 23) - 1)

#define EXACT_MAX_DEPTH 128   /* call-stack frames kept per context (as the sampled engine) */

typedef struct exact_frame {
    UInt node;    /* call-tree node of the caller chain at this depth */
    Addr sp;      /* stack pointer on entry to the callee (after the return address push) */
} exact_frame;

enum exact_stat {
    XS_ACCESSES,       /* accesses of the monitored kind (every one is "sampled") */
    XS_PAIRS,          /* pairs counted */
    XS_CROSS_THREAD,   /* a pending access ended by another thread's access (not paired) */
    XS_STACK,          /* dropped: inside the thread's stack, with --stack exclude */
    XS_STACK_PROBE,    /* dropped: a store far below the stack pointer */
    XS_CTX_FULL,       /* accesses whose context was past the table: paired, not named */
    XS_COUNT
};

/* One level of a Java thread's frame-pointer chain (exact_java.c). */
#define EXACT_JAVA_DEPTH 128
#define EXACT_JLEAF_CACHE 256
typedef struct exact_jlevel {
    Addr pc, fp, bcp;   /* bcp: the saved bytecode pointer when pc is in the interpreter */
    UInt node;          /* call-tree node of the Java frames from the root to this level */
} exact_jlevel;

typedef struct exact_thread {
    UInt index;            /* 1..EXACT_MAX_THREADS-1; what the shadow stores */
    Int os_tid;
    exact_frame *stack;
    UInt depth, cap;
    UInt cur;              /* call-tree node of the current function's caller chain */
    Addr stack_lo, stack_hi;
    ULong stats[XS_COUNT];
    /* Last leaf contexts looked up, by (node, pc): loops hit the same few. */
    struct { UInt node; Addr pc; UInt ctx; } leaf_cache[256];
    /* Java threads (exact_java.c): watched only while the agent says so. */
    Bool java, was_java;
    UInt jgen, jn;                      /* the code map's generation; levels of the last walk */
    exact_jlevel jm[EXACT_JAVA_DEPTH];  /* the last walk, resolved */
    struct { Addr pc, bcp; UInt node, ctx; } jleaf[EXACT_JLEAF_CACHE];
} exact_thread;

typedef struct exact_options {
    enum exact_mode mode;
    double fp_tolerance;
    const HChar *fp_tolerance_text;   /* as given, for the raw file */
    Bool stack_exclude;
    const HChar *dir;          /* the run directory; the raw file goes to dir/.exact/ */
    ULong limit_insns;         /* 0: none */
    ULong limit_ms;            /* 0: none */
    Bool java;                 /* a JVM: only Java threads, Java contexts, its runtime state left out */
    UInt max_ctx;              /* the id of contexts past the table (EXACT_MAX_CTX; lower in tests) */
} exact_options;

extern exact_options exact_opts;
extern exact_thread *exact_cur;                  /* the thread running client code */
extern exact_thread *exact_threads[EXACT_MAX_THREADS];
extern UInt exact_nthreads;
extern ULong exact_insns;                        /* guest instructions run (with a limit) */
extern ULong exact_next_check;
extern Bool exact_limit_hit;
extern ULong exact_cut_insns;                    /* instructions run when a JVM was cut */

/* exact_tables.c */
void exact_tables_init(void);
void exact_tables_reset_pairs(void);
UInt exact_node_child(UInt parent, Addr call_pc);
UInt exact_leaf(exact_thread *t, Addr pc, UInt len);
UInt exact_leaf_at(UInt node, Addr pc, UInt len);
/* One leaf below node for every access keyed alike (a pc never is: key
 * < 4096); the first access's instruction (pc, len) is the one shown. */
UInt exact_leaf_keyed(UInt node, Addr key, Addr pc, UInt len);
const UChar *exact_leaf_bytes(UInt ctx);
void exact_leaf_set_node(UInt ctx, UInt node);   /* the instruction's bytes as first seen (len of them) */
/* Java frames: (jmethodID, bci) or (Method*, bytecode pointer), ids from 0. */
UInt exact_jframe(ULong method, ULong bci, UInt kind);
void exact_jframe_info(UInt id, ULong *method, ULong *bci, UInt *kind);
UInt exact_njframes(void);
void exact_pair_add(UInt tindex, UInt c1, UInt c2, UInt bytes, UInt wasteful, UInt a64, UInt a32);
/* Iteration for the writer. */
typedef struct exact_pair {
    UInt tindex, c1, c2;   /* c1 == 0: a free slot */
    ULong count, bytes, wasteful, approx64, approx32;
} exact_pair;
UInt exact_npairs_cap(void);
const exact_pair *exact_pair_at(UInt slot);     /* NULL when the slot is free */
void exact_leaf_info(UInt ctx, UInt *node, Addr *pc, UInt *len);
void exact_node_info(UInt node, UInt *parent, Addr *call_pc);
/* The debug-info epoch when the node (leaf) was first seen: with
 * --keep-debuginfo=yes it still names code unloaded since. */
UInt exact_node_epoch(UInt node);
UInt exact_leaf_epoch(UInt ctx);
UInt exact_nleaves(void);
UInt exact_nnodes(void);

/* exact_shadow.c */
void exact_shadow_init(void);
void exact_on_access(Addr addr, ULong value, ULong info, Addr sp);
void exact_on_access_wide(Addr addr, ULong size_kind, ULong pc, Addr sp);
void exact_on_access_java(Addr addr, ULong value, ULong info, Addr sp, Addr fp, Addr r13);
void exact_on_access_wide_java(Addr addr, ULong size_kind, ULong pc, Addr sp, Addr fp, Addr r13);
void exact_shadow_clear(void);

/* exact_java.c */
extern UInt exact_java_generation;
Bool exact_java_request(ThreadId tid, UWord *arg, UWord *ret);
Bool exact_java_watched(const exact_thread *t);
void exact_java_stop(void);   /* nothing is watched any more */
void exact_java_cut(void);    /* --exact-limit: the agent names frames, then the tool ends the run */
Bool exact_java_started(void);   /* the agent announced a Java thread (the VM is up) */
UInt exact_java_leaf(exact_thread *t, Addr pc, UInt len, Addr sp, Addr fp, Addr r13);
/* A system call read the thread's [addr, addr + size) (exact_syscall.c). */
void exact_on_kernel_read(exact_thread *t, Addr addr, SizeT size, Addr pc, Addr sp, Addr fp, Addr r13);
void exact_syscall_init(void);
Bool exact_java_key(Addr key, UInt *jframe);
void exact_java_name(UInt jframe, const HChar **function, const HChar **file, UInt *line);

/* exact_instrument.c */
IRSB *exact_instrument(VgCallbackClosure *closure, IRSB *sb_in, const VexGuestLayout *layout,
                       const VexGuestExtents *vge, const VexArchInfo *arch, IRType gw, IRType hw);

/* exact_main.c */
/* Prints "[wasp] ERROR <what>" as one line on stderr, without Valgrind's
 * "==pid==" prefix, so it reads like every other wasp error. */
void exact_error(const HChar *what);
exact_thread *exact_thread_of(ThreadId tid);
void exact_call(Addr call_pc, Addr sp);
void exact_ret(Addr sp);
void exact_check_limit(void);

/* exact_code.c: JIT code bytes and line tables, for the profile's code records */
struct wx_code;
UInt exact_code_capture(const struct wx_code *c);   /* a code id, 0 when not kept */
void exact_code_release(UInt code);                 /* its code left the code map */
void exact_code_leaf(UInt ctx, Addr pc, UInt code); /* a leaf context's pc lies in code */
void exact_code_prepare(void);                      /* interns the line frames written codes need */
UInt exact_code_of_leaf(UInt ctx);                  /* 0 when none, or not prepared */
UInt exact_code_ids(void);                          /* ids are below this */
void exact_code_info(UInt code, Addr *start, UInt *size, const UChar **bytes, UInt *jname);
UInt exact_code_nlines(UInt code);
void exact_code_line(UInt code, UInt i, UInt *offset, UInt *jframe);
void exact_code_stats(ULong *kept_bytes, ULong *left_out_bytes);

/* exact_write.c */
void exact_write_raw(const HChar *why);
void exact_write_forget(void);
void exact_write_leaves_used(UChar *leaf_used);     /* marks the leaves the raw file writes */

#endif

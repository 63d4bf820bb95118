/*
 * exact_requests.h - what the JVM agent's maps-only mode (src/jvm/
 * exactmaps.c, inside the program) tells the exact tool (src/exact/, inside
 * Valgrind) through Valgrind client requests: which threads are Java
 * threads, where generated code lives and which Java frames (inlining
 * included) each stretch of JIT code belongs to, when a GC starts, and, at
 * VM death, the names of the Java frames the tool's contexts use.
 *
 * Shared by both sides, so plain C types only (the tool has no libc).
 */
#ifndef WASP_EXACT_REQUESTS_H
#define WASP_EXACT_REQUESTS_H

/* VG_USERREQ_TOOL_BASE('W', 'X'), spelled out: the agent does not include
 * the tool's headers. */
#define WX_BASE ((((unsigned long)'W' & 0xff) << 24) | (((unsigned long)'X' & 0xff) << 16))

enum wx_request {
    WX_HELLO = WX_BASE + 1,   /* () -> WX_VERSION when the wasp exact tool runs the program */
    WX_THREAD,                /* (1|0): the calling thread starts / stops being a Java thread */
    WX_CODE,                  /* (const wx_code *): generated code appeared */
    WX_UNLOAD,                /* (start): the JIT code at start is gone */
    WX_GC,                    /* (): a GC starts; objects move, no pair spans it */
    WX_NEEDED,                /* (wx_frame *buf, cap) -> how many Java frames need a name */
    WX_NAME,                  /* (index, function, file, line): the name of frame index */
    WX_DEATH,                 /* (): the VM is dead: Java threads are not watched any more */
    WX_POLL,                  /* () -> 1 when --exact-limit cut the run: name frames, then WX_CUT_DONE */
    WX_CUT_DONE,              /* (): frames named after a cut: the tool writes its file and ends */
};

#define WX_VERSION 1

enum wx_code_kind { WX_JIT = 1, WX_STUB = 2, WX_INTERPRETER = 3 };

/* One Java frame: a jmethodID and a bci (JIT scopes), or, for an
 * interpreted frame, the Method* and the bytecode pointer its frame holds
 * (the agent turns them into a method and a bci when it names them). */
enum wx_frame_kind { WX_FRAME_JMETHOD = 0, WX_FRAME_INTERPRETED = 1 };

typedef struct wx_frame {
    unsigned long long method;   /* jmethodID, or Method* when interpreted */
    unsigned long long bci;      /* bci, or the bytecode pointer when interpreted */
    unsigned long long kind;     /* wx_frame_kind */
} wx_frame;

/* The code of a scope ends at offset (HotSpot's PcDescs mark the ends): an
 * instruction at offset o belongs to the first scope with offset > o. Its
 * frames run from frames[first] (innermost, inlined) to
 * frames[first + nframes - 1] (the compiled method). */
typedef struct wx_scope {
    unsigned int offset;
    unsigned int nframes;
    unsigned int first;
} wx_scope;

typedef struct wx_code {
    unsigned long long start, end;
    unsigned long long kind;        /* wx_code_kind */
    unsigned long long method;      /* the compiled method (jmethodID), JIT only */
    unsigned long long nscopes, nframes;
    const wx_scope *scopes;         /* sorted by offset */
    const wx_frame *frames;
} wx_code;

#endif

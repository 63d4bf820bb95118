/*
 * stacks.c - Java calling contexts in a signal handler, with HotSpot's
 * AsyncGetCallTrace (the one stack walker that is safe there and free of
 * safepoint bias), and code bounds from the code map or, for code outside
 * the code cache, from the unwind tables.
 *
 * Runs in signal context. AsyncGetCallTrace fails inside code-cache stubs
 * (arraycopy, intrinsics: it returns "unknown Java"); there we step out to
 * the stub's caller (stubstep.c), by its return address at the stack top or
 * through the frame pointer, so the access is attributed to the Java frame
 * that called the stub instead of being dropped.
 */
#include <dlfcn.h>
#include <string.h>

#include "codemap.h"
#include "decode.h"
#include "jvm.h"
#include "native.h"
#include "stubstep.h"

typedef struct {
    jint lineno;          /* bci for Java frames; negative for special frames */
    jmethodID method_id;
} asgct_frame;

typedef struct {
    JNIEnv *env_id;
    jint num_frames;
    asgct_frame *frames;
} asgct_trace;

typedef void (*asgct_fn)(asgct_trace *, jint, void *);

static asgct_fn async_get_call_trace;

int jvm_stacks_init(void)
{
    async_get_call_trace = (asgct_fn)dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
    return async_get_call_trace ? 0 : -1;
}

/* Code sweeps stay bounded in a handler (decode.c limits them too); the
 * interpreter is one large blob, where we rely on the fallbacks instead. */
#define MAX_SWEEP_BLOB (64u * 1024u)
/* A window of a JIT blob around the pc: decoding a whole large C2 method on
 * every decode-cache miss was half the handler time (docs/benchmarks.md).
 * Branches into the window from farther away go unseen. */
#define WINDOW_BEFORE 1024u
#define WINDOW_AFTER 2048u

/* The start of an instruction at least WINDOW_BEFORE bytes before offset:
 * HotSpot's debug records sit on instruction boundaries. */
static uint64_t boundary_before(const code_blob *b, uint64_t offset)
{
    uint32_t lo = 0, hi = b->nscopes, want = offset > WINDOW_BEFORE ? (uint32_t)(offset - WINDOW_BEFORE) : 0;
    if (!b->scopes || want == 0)
        return b->start;
    while (lo < hi) {   /* first record beyond want */
        uint32_t mid = (lo + hi) / 2;
        if (b->scopes[mid].offset <= want)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? b->start + b->scopes[lo - 1].offset : b->start;
}

/* A pc in no blob is in libjvm, libc or a JNI library (the exact mode
 * counts their accesses under the Java frames that called them): without
 * its function's bounds a sample there could take only the instruction at
 * its pc, and that VM code was undercounted several times over. A JIT blob
 * not reported yet has no unwind table: -1, as before. */
static int jvm_bounds(const ucontext_t *uc, code_bounds *out)
{
    uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    const code_blob *b = codemap_find(pc);
    if (!b)
        return native_code_bounds(uc, out);
    if (b->kind != CODE_JIT && b->end - b->start > MAX_SWEEP_BLOB)
        return -2;   /* the interpreter: known, too long to decode */
    out->start = b->kind == CODE_JIT ? boundary_before(b, pc - b->start) : b->start;
    out->code_start = b->start;
    out->code_end = b->end;
    out->code_id = (uint64_t)(uintptr_t)b;   /* never freed: names this code alone */
    out->end = b->end - pc > WINDOW_AFTER ? pc + WINDOW_AFTER : b->end;
    return 0;
}

static int call_trace(jvm_thread *jt, ucontext_t *uc, asgct_frame *frames, int max)
{
    asgct_trace trace = { .env_id = jt->env, .num_frames = 0, .frames = frames };
    async_get_call_trace(&trace, max, uc);
    return trace.num_frames;
}

static int jvm_walk(void *thread_data, const ucontext_t *uc, uint64_t leaf_pc, frame_key *out, int max)
{
    jvm_thread *jt = thread_data;
    asgct_frame frames[ENGINE_MAX_FRAMES];
    ucontext_t copy;
    stub_stack stack;

    if (!jt || !jt->env || !async_get_call_trace || max < 2)
        return -1;
    stack = (stub_stack){ .tid = jt->tid, .lo = jt->stack_lo, .hi = jt->stack_hi };
    /* Walk from the accessing instruction itself, not from the pc the signal
     * left us at (the next instruction, or later). C2's extra PcDescs mark
     * the *end* of the code a scope covers and ASGCT looks up
     * pc_desc_near(pc + 1): from the next instruction's pc it finds the
     * next scope (e.g. the loop increment), one line off. The access is in
     * the same frame (it is never a call, push or ret), so sp/fp stay valid.
     * For the same reason a step out of a stub resumes at the return address
     * minus one, inside the call instruction, whose PcDesc (if it has one)
     * ends at the return address: that is the call's own scope. */
    memcpy(&copy, uc, sizeof(copy));
    if (leaf_pc)
        copy.uc_mcontext.gregs[REG_RIP] = (greg_t)leaf_pc;
    int n = call_trace(jt, &copy, frames, max - 1);
    if (n <= 0) {
        memcpy(&copy, uc, sizeof(copy));
        if (stub_step_by_stack_top(&stack, &copy) == 0)
            n = call_trace(jt, &copy, frames, max - 1);
    }
    if (n <= 0) {
        memcpy(&copy, uc, sizeof(copy));
        if (stub_step_by_frame_pointer(&stack, &copy) == 0)
            n = call_trace(jt, &copy, frames, max - 1);
    }
    if (n <= 0)
        return -1;
    /* The blob id names the code as it is now, even once recompiled away. */
    out[0] = (frame_key){ .id = leaf_pc, .aux = FRAME_INSN | codemap_mark_wanted(leaf_pc) };
    for (int i = 0; i < n; i++)
        out[i + 1] = (frame_key){ .id = (uint64_t)(uintptr_t)frames[i].method_id,
                                  .aux = FRAME_JAVA | (uint32_t)frames[i].lineno };
    return n + 1;
}

const engine_frontend jvm_frontend = {
    .name = "jvm",
    .stack_default = STACK_EXCLUDE,
    .rip_relative_is_constant = 1,
    .r15_is_thread = 1,
    .bounds = jvm_bounds,
    .walk = jvm_walk,
    .symbolize = jvm_symbolize,
    .code = jcode_describe,
    .instruction = jcode_instruction,
    .checkpoint_thread_begin = jvm_attach_checkpoint_thread,
};

/*
 * unwind.c - calling contexts and function bounds of native code, with
 * libunwind's local unwinder.
 *
 * Runs in signal context. libunwind's local unwinding is designed for that:
 * it allocates from its own mmap'd pools and validates memory it reads; the
 * lock inside glibc's dl_iterate_phdr that it may take is recursive, so a
 * signal that interrupted a dlopen in this thread cannot deadlock it.
 */
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "native.h"

static int init_cursor(unw_cursor_t *c, const ucontext_t *uc)
{
    /* On x86-64 unw_context_t is a ucontext_t; the signal frame flag makes
     * libunwind use the pc as is, not pc-1, for the interrupted frame. */
    return unw_init_local2(c, (unw_context_t *)(uintptr_t)uc, UNW_INIT_SIGNAL_FRAME);
}

static int native_bounds(const ucontext_t *uc, code_bounds *out)
{
    unw_cursor_t c;
    unw_proc_info_t pi;
    if (init_cursor(&c, uc) < 0 || unw_get_proc_info(&c, &pi) < 0 || pi.start_ip >= pi.end_ip)
        return -1;
    out->start = pi.start_ip;
    out->end = pi.end_ip;
    return 0;
}

/* unw_backtrace walks from here, through the signal frame, using
 * libunwind's per-thread trace cache: no signal masking per step (the
 * cursor API costs ~10 rt_sigprocmask calls per walk, measured). The
 * interrupted frame is the one whose address is the interrupted pc. */
static int native_walk(void *thread_data, const ucontext_t *uc, uint64_t leaf_pc, frame_key *out, int max)
{
    void *buf[ENGINE_MAX_FRAMES + 8];
    (void)thread_data;
    uint64_t rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    int n = unw_backtrace(buf, ENGINE_MAX_FRAMES + 8), i, k = 0;
    for (i = 0; i < n && (uint64_t)buf[i] != rip; i++)
        ;
    if (i == n || max < 1)
        return -1;
    out[k++] = (frame_key){ .id = leaf_pc };
    for (i++; i < n && k < max; i++)
        out[k++] = (frame_key){ .id = (uint64_t)buf[i] };
    return k;
}

/* The global cache guards itself by masking signals: two rt_sigprocmask
 * calls per lookup, ~10 per event, measured. A per-thread cache needs no
 * lock; libunwind is loaded at start-up with the preloaded library, so its
 * thread-local cache is static TLS, safe to touch in a handler. */
void native_unwind_init(void)
{
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}

const engine_frontend native_frontend = {
    .name = "native",
    .stack_default = STACK_INCLUDE,
    .bounds = native_bounds,
    .walk = native_walk,
    .symbolize = native_symbolize,
};

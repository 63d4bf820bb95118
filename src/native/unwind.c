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

static int native_walk(const ucontext_t *uc, uint64_t leaf_pc, frame_key *out, int max)
{
    unw_cursor_t c;
    int n = 0;
    if (init_cursor(&c, uc) < 0 || max < 1)
        return -1;
    out[n++] = (frame_key){ .id = leaf_pc };
    while (n < max && unw_step(&c) > 0) {
        unw_word_t ip;
        if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0)
            break;
        out[n++] = (frame_key){ .id = ip };
    }
    return n;
}

const engine_frontend native_frontend = {
    .name = "native",
    .bounds = native_bounds,
    .walk = native_walk,
    .symbolize = native_symbolize,
};

/*
 * unwind.c - calling contexts and function bounds of native code, with
 * libunwind's local unwinder.
 *
 * Runs in signal context. libunwind's local unwinding is designed for that:
 * it allocates from its own mmap'd pools and validates memory it reads. The
 * lock inside glibc's dl_iterate_phdr that it takes is recursive, but not
 * while this thread is halfway through taking or freeing it: then the
 * handler stays out (loader_lock.c).
 */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <sched.h>
#include <time.h>

#include "native.h"

/* A fork while another thread's handler is inside libunwind can leave the
 * child a locked loader lock: libunwind takes glibc's dl_load_write_lock
 * through dl_iterate_phdr, glibc does not reset that lock in the child, and
 * the child's first sample blocked on it for ever (fork_while_writing hung
 * in the QEMU guest, 1 run in 6; the child's stack showed dl_iterate_phdr
 * under libunwind under our handler). So a fork waits until no handler is
 * in libunwind, and handlers that come meanwhile do not enter it. */
static int unwinding;       /* handlers inside libunwind now */
static int fork_pending;    /* a fork is under way: stay out */

static int unwind_enter(void)
{
    if (loader_lock_busy())
        return 0;
    __atomic_add_fetch(&unwinding, 1, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&fork_pending, __ATOMIC_SEQ_CST))
        return 1;
    __atomic_sub_fetch(&unwinding, 1, __ATOMIC_SEQ_CST);
    return 0;
}

static void unwind_leave(void)
{
    __atomic_sub_fetch(&unwinding, 1, __ATOMIC_SEQ_CST);
}

void native_unwind_before_fork(void)
{
    struct timespec start, now;
    __atomic_store_n(&fork_pending, 1, __ATOMIC_SEQ_CST);
    clock_gettime(CLOCK_MONOTONIC, &start);
    /* A handler spends microseconds in there; never hold a fork up for
     * more than 100 ms, whatever happened to one. */
    while (__atomic_load_n(&unwinding, __ATOMIC_SEQ_CST) > 0) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) > 100000000L)
            break;
        sched_yield();
    }
}

void native_unwind_after_fork_parent(void)
{
    __atomic_store_n(&fork_pending, 0, __ATOMIC_SEQ_CST);
}

void native_unwind_after_fork_child(void)
{
    __atomic_store_n(&unwinding, 0, __ATOMIC_SEQ_CST);   /* the other threads did not come along */
    __atomic_store_n(&fork_pending, 0, __ATOMIC_SEQ_CST);
}

static int init_cursor(unw_cursor_t *c, const ucontext_t *uc)
{
    /* On x86-64 unw_context_t is a ucontext_t; the signal frame flag makes
     * libunwind use the pc as is, not pc-1, for the interrupted frame. */
    return unw_init_local2(c, (unw_context_t *)(uintptr_t)uc, UNW_INIT_SIGNAL_FRAME);
}

/* Where libunwind finds no unwind entry it does not fail: it answers with
 * a function of one byte at the pc (x86_64 Gget_proc_info.c, for _start's
 * sake), in which no sample finds an access. */
static int stand_in(const unw_proc_info_t *pi, uint64_t pc)
{
    return pi->start_ip == pc && pi->end_ip == pc + 1;
}

int native_code_bounds(const ucontext_t *uc, code_bounds *out)
{
    unw_cursor_t c;
    unw_proc_info_t pi;
    uint64_t rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP], start, end;
    if (!unwind_enter())
        return -1;
    int ok = init_cursor(&c, uc) == 0 && unw_get_proc_info(&c, &pi) == 0 && pi.start_ip < pi.end_ip;
    unwind_leave();
    if (ok && !stand_in(&pi, rip)) {
        start = pi.start_ip;
        end = pi.end_ip;
    } else if (func_table_bounds(rip, &start, &end) < 0) {
        return -1;
    }
    out->start = start;
    out->end = end;
    out->code_start = out->start;
    out->code_end = out->end;
    /* What lives at an address changes only with an unload that counted
     * (unloads.c): an image made before one is not used after it. */
    out->code_id = CODE_ID_TEXT + 2 * unloads_generation();
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
    if (!unwind_enter())
        return -1;
    int n = unw_backtrace(buf, ENGINE_MAX_FRAMES + 8), i, k = 0;
    unwind_leave();
    for (i = 0; i < n && (uint64_t)buf[i] != rip; i++)
        ;
    if (i == n || max < 1)
        return -1;
    /* Which code lived where when captured (unloads.c): the same pc may
     * hold another library's code by the time the profile is written. */
    uint64_t gen = unloads_generation() & ~FRAME_TAG_MASK;
    out[k++] = (frame_key){ .id = leaf_pc, .aux = FRAME_NATIVE | gen };
    for (i++; i < n && k < max; i++)
        out[k++] = (frame_key){ .id = (uint64_t)buf[i], .aux = FRAME_NATIVE | gen };
    return k;
}

/* The global cache guards itself by masking signals: two rt_sigprocmask
 * calls per lookup, ~10 per event, measured. A per-thread cache needs no
 * lock; libunwind is loaded at start-up with the preloaded library, so its
 * thread-local cache is static TLS, safe to touch in a handler. */
void native_unwind_init(void)
{
    loader_lock_init();
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}

const engine_frontend native_frontend = {
    .name = "native",
    .stack_default = STACK_INCLUDE,
    .bounds = native_code_bounds,
    .walk = native_walk,
    .symbolize = native_symbolize,
};

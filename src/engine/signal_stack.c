/*
 * signal_stack.c - the stack wasp gives a thread's signal handler
 * (signal_stack.h).
 *
 * The handler runs on a stack of its own: unwinding, decoding and the JVM's
 * AsyncGetCallTrace take 10-20 KB, more than a small thread stack (or a
 * JVM thread near its guard zone) has left. A thread that already has an
 * alternate stack (the program's) keeps it. MAP_NORESERVE: only the pages
 * the handler touches cost memory; the lowest page guards.
 *
 * Stacks of ended threads are kept for the next ones (a few, under a mutex
 * no handler takes): a program that starts a thread per task paid a map, a
 * guard and an unmap per thread, and each unmap flushes every core's TLB.
 */
#include "signal_stack.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <ucontext.h>

#define KEPT_STACKS 8

static struct {
    pthread_mutex_t lock;
    void *stack[KEPT_STACKS];
    int n;
} kept = { .lock = PTHREAD_MUTEX_INITIALIZER };

void *signal_stack_map(void)
{
    void *p = NULL;
    pthread_mutex_lock(&kept.lock);
    if (kept.n)
        p = kept.stack[--kept.n];
    pthread_mutex_unlock(&kept.lock);
    if (p)
        return p;
    p = mmap(NULL, ALTSTACK_SIZE, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    mprotect(p, ALTSTACK_GUARD, PROT_NONE);
    return p;
}

void signal_stack_unmap(void *stack)
{
    if (!stack)
        return;
    pthread_mutex_lock(&kept.lock);
    if (kept.n < KEPT_STACKS) {
        kept.stack[kept.n++] = stack;
        stack = NULL;
    }
    pthread_mutex_unlock(&kept.lock);
    if (stack)
        munmap(stack, ALTSTACK_SIZE);
}

void signal_stack_after_fork_child(void)
{
    pthread_mutex_init(&kept.lock, NULL);
}

void signal_stack_give(thread_state *t)
{
    stack_t now, ours;
    if (sigaltstack(NULL, &now) != 0 || !(now.ss_flags & SS_DISABLE))
        return;
    char *p = signal_stack_map();
    if (!p)
        return;
    ours.ss_sp = p + ALTSTACK_GUARD;
    ours.ss_size = ALTSTACK_SIZE - ALTSTACK_GUARD;
    ours.ss_flags = 0;
    if (sigaltstack(&ours, NULL) != 0) {
        signal_stack_unmap(p);
        return;
    }
    t->altstack = p;
}

void signal_stack_take(thread_state *t)
{
    stack_t now, off = { .ss_flags = SS_DISABLE };
    if (!t->altstack)
        return;
    if (sigaltstack(NULL, &now) == 0 && now.ss_sp == (char *)t->altstack + ALTSTACK_GUARD)
        sigaltstack(&off, NULL);
    else
        return;   /* the program set its own since: ours may be unused, but stays */
    signal_stack_unmap(t->altstack);
    t->altstack = NULL;
}

/* A thread ends in its own key destructor, on its own stack, which may be
 * 16 KiB with most of it used: symbolizing and publishing need more (a
 * 16 KiB thread died of it in tests/stress small_stacks). When less than
 * WRITE_STACK_NEEDED is left, the write runs on the stack wasp gave the
 * thread's signal handler, free by now (its events are closed). Threads
 * with room (every JVM thread: the JVM checks which stack it runs on)
 * write where they stand. */
#define WRITE_STACK_NEEDED (128u * 1024u)

static int stack_is_short(const thread_state *t)
{
    uint64_t sp = (uint64_t)(uintptr_t)__builtin_frame_address(0);
    return t->stack_lo && sp > t->stack_lo && sp - t->stack_lo < WRITE_STACK_NEEDED;
}

/* makecontext passes ints: the state and the function go as halves. */
static void run_entry(unsigned t_hi, unsigned t_lo, unsigned fn_hi, unsigned fn_lo)
{
    void (*fn)(thread_state *) =
        (void (*)(thread_state *))(uintptr_t)((uint64_t)fn_hi << 32 | fn_lo);
    fn((thread_state *)(uintptr_t)((uint64_t)t_hi << 32 | t_lo));
}

void signal_stack_run(thread_state *t, void (*fn)(thread_state *t))
{
    ucontext_t here, there;
    uint64_t p = (uint64_t)(uintptr_t)t, f = (uint64_t)(uintptr_t)fn;
    if (!t->altstack || !stack_is_short(t) || getcontext(&there) != 0) {
        fn(t);
        return;
    }
    there.uc_stack.ss_sp = (char *)t->altstack + ALTSTACK_GUARD;
    there.uc_stack.ss_size = ALTSTACK_SIZE - ALTSTACK_GUARD;
    there.uc_link = &here;
    makecontext(&there, (void (*)(void))run_entry, 4, (unsigned)(p >> 32), (unsigned)p,
                (unsigned)(f >> 32), (unsigned)f);
    if (swapcontext(&here, &there) != 0)
        fn(t);
}

/*
 * loader_lock.c - whether a signal handler may take glibc's loader write
 * lock (dl_load_write_lock), which dl_iterate_phdr takes, and libunwind
 * with it, whenever it looks up a pc's unwind table.
 *
 * The lock is recursive, but a thread interrupted between taking its word
 * and recording itself as the owner, or between clearing the owner and
 * freeing the word on unlock, holds it without owning it: a handler in
 * that thread that takes it again waits for itself for ever. A program
 * that dlopens and dlcloses a library in a loop hung within seconds at a
 * 100 us interval (tests/e2e dlopen_loop), and a JVM hung loading
 * libnio.so, its main thread stopped in pthread_mutex_lock under
 * _dl_add_to_namespace_list. glibc keeps the lock in its private
 * _rtld_global, at an offset that changes between versions, so it is
 * found at start-up: inside a dl_iterate_phdr callback this thread holds
 * it, and it is the one recursive mutex in _rtld_global owned by this
 * thread. Where it cannot be found, handlers take it as before.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "native.h"

/* The head of glibc's x86-64 pthread_mutex_t (struct __pthread_mutex_s). */
typedef struct mutex_head {
    int lock;
    unsigned count;
    int owner;
    unsigned nusers;
    int kind;
} mutex_head;

static const mutex_head *write_lock;

typedef struct scan {
    const char *base;
    size_t size;
    int tid;
    const mutex_head *found;
    int matches;
} scan;

static int find_held(struct dl_phdr_info *info, size_t size, void *arg)
{
    scan *s = arg;
    (void)info;
    (void)size;
    for (size_t off = 0; off + sizeof(mutex_head) <= s->size; off += sizeof(int)) {
        const mutex_head *m = (const mutex_head *)(const void *)(s->base + off);
        if (m->lock != 0 && m->owner == s->tid && m->count >= 1 &&
            (m->kind & 0x7f) == PTHREAD_MUTEX_RECURSIVE_NP) {
            s->found = m;
            s->matches++;
        }
    }
    return 1;   /* one call is enough: the lock is held for all of them */
}

void loader_lock_init(void)
{
    void *global = dlsym(RTLD_DEFAULT, "_rtld_global");
    const ElfW(Sym) *sym = NULL;
    Dl_info info;
    if (write_lock || !global || !dladdr1(global, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym)
        return;
    scan s = { .base = global, .size = sym->st_size, .tid = (int)syscall(SYS_gettid) };
    dl_iterate_phdr(find_held, &s);
    if (s.matches == 1)
        __atomic_store_n(&write_lock, s.found, __ATOMIC_RELEASE);
}

int loader_lock_busy(void)
{
    const mutex_head *m = __atomic_load_n(&write_lock, __ATOMIC_ACQUIRE);
    if (!m)
        return 0;
    /* Free nearly always: only then is the owner (a system call) not needed. */
    if (__atomic_load_n(&m->lock, __ATOMIC_ACQUIRE) == 0)
        return 0;
    return __atomic_load_n(&m->owner, __ATOMIC_ACQUIRE) != (int)syscall(SYS_gettid);
}

/*
 * thread.c - where thread states live, and the names of their counters as
 * written into profiles.
 *
 * States come from one arena mapped once (MAP_NORESERVE: only the slots in
 * use cost memory) and never unmapped, so the handler may read any address
 * inside it. A free list under a mutex hands slots out; the mutex is never
 * taken in signal context.
 */
#include "thread.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#define ARENA_SLOTS (1u << 16)
#define SLOT_SIZE ((sizeof(thread_state) + 63) & ~(size_t)63)

static struct {
    pthread_mutex_t lock;
    char *base;              /* ARENA_SLOTS slots; NULL until the first thread */
    uint32_t next_unused;    /* slots below this were handed out once */
    uint32_t *free_list;     /* released slots, a stack inside the arena's tail */
    uint32_t nfree;
} arena = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int arena_map(void)
{
    size_t size = ARENA_SLOTS * SLOT_SIZE + ARENA_SLOTS * sizeof(uint32_t);
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    arena.free_list = (uint32_t *)((char *)p + ARENA_SLOTS * SLOT_SIZE);
    __atomic_store_n(&arena.base, (char *)p, __ATOMIC_RELEASE);
    return 0;
}

thread_state *thread_alloc(void)
{
    thread_state *t = NULL;
    pthread_mutex_lock(&arena.lock);
    if (arena.base || arena_map() == 0) {
        if (arena.nfree)
            t = (thread_state *)(arena.base + (size_t)arena.free_list[--arena.nfree] * SLOT_SIZE);
        else if (arena.next_unused < ARENA_SLOTS)
            t = (thread_state *)(arena.base + (size_t)arena.next_unused++ * SLOT_SIZE);
    }
    pthread_mutex_unlock(&arena.lock);
    if (t)
        memset(t, 0, sizeof(*t));
    return t;
}

void thread_release(thread_state *t)
{
    __atomic_store_n(&t->magic, 0, __ATOMIC_RELEASE);
    pthread_mutex_lock(&arena.lock);
    arena.free_list[arena.nfree++] = (uint32_t)(((char *)t - arena.base) / SLOT_SIZE);
    pthread_mutex_unlock(&arena.lock);
}

void thread_after_fork_child(void)
{
    pthread_mutex_init(&arena.lock, NULL);
}

int thread_in_arena(uint64_t addr)
{
    const char *base = __atomic_load_n(&arena.base, __ATOMIC_ACQUIRE);
    return base && addr >= (uint64_t)(uintptr_t)base &&
           addr < (uint64_t)(uintptr_t)base + ARENA_SLOTS * SLOT_SIZE;
}

thread_state *thread_live(uint64_t addr)
{
    if ((addr - (uint64_t)(uintptr_t)arena.base) % SLOT_SIZE != 0)
        return NULL;
    thread_state *t = (thread_state *)(uintptr_t)addr;
    return __atomic_load_n(&t->magic, __ATOMIC_ACQUIRE) == THREAD_MAGIC ? t : NULL;
}

const char *thread_stat_name(enum thread_stat s)
{
    static const char *const names[STAT_COUNT] = {
        "samples", "armed", "declined", "replaced", "traps", "primed", "kept",
        "sample_ns", "trap_ns", "sampling_ms", "sigtrap_lost",
    };
    return (unsigned)s < STAT_COUNT ? names[s] : "unknown";
}

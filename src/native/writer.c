/*
 * writer.c - the thread that writes a native process's last profiles
 * (writer.h).
 *
 * One final request is served, ever: whatever ends the process first.
 * Before it, any number of requests for function tables (func_table.c),
 * which a handler cannot build. A futex word carries them, so a request
 * is a compare-and-swap and a wake-up, both async-signal-safe, and needs
 * no descriptor (a program that closes every descriptor and reopens files
 * must never receive wasp's bytes).
 */
#include "writer.h"

#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "native.h"

#define REQ_EXIT 1u
#define REQ_STOP 2u          /* | signal << 8 */
#define REQ_TABLES 4u        /* not the one request: function tables wanted (func_table.c) */

static uint32_t request;     /* 0 until the one request */
static uint32_t finished;    /* 1 once the profiles are written */
static pid_t stop_tid;
static void (*stop_restore)(void);
static pid_t owner;          /* the process whose writer runs; 0: none */

static long futex(uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
    return syscall(SYS_futex, word, op | FUTEX_PRIVATE_FLAG, val, timeout, NULL, 0);
}

static void *serve(void *unused)
{
    uint32_t r;
    (void)unused;
    prctl(PR_SET_NAME, "wasp-writer", 0, 0, 0);
    /* Function tables are built while the program runs; the one request
     * that ends it ends this loop. */
    while (((r = __atomic_load_n(&request, __ATOMIC_ACQUIRE)) & ~REQ_TABLES) == 0) {
        if (r & REQ_TABLES) {
            __atomic_and_fetch(&request, ~REQ_TABLES, __ATOMIC_ACQ_REL);
            func_table_serve();
        } else {
            futex(&request, FUTEX_WAIT, 0, NULL);
        }
    }
    r &= ~REQ_TABLES;
    engine_shutdown();
    __atomic_store_n(&finished, 1, __ATOMIC_RELEASE);
    futex(&finished, FUTEX_WAKE, INT_MAX, NULL);
    if (r & REQ_STOP) {
        if (stop_restore)
            stop_restore();
        if (syscall(SYS_tgkill, owner, stop_tid, (int)(r >> 8)) < 0)
            kill(owner, (int)(r >> 8));
    }
    for (;;)
        pause();
    return NULL;
}

int writer_start(void)
{
    request = finished = 0;
    owner = 0;
    if (engine_spawn_thread(serve, 256 * 1024) < 0)
        return -1;
    owner = getpid();
    return 0;
}

/* The one request; 1 if this call made it, 0 if another came first, -1
 * if there is no writer of this process (a vfork child shares our memory,
 * not our threads). */
static int post(uint32_t r)
{
    if (!owner || owner != getpid())
        return -1;
    uint32_t was = __atomic_load_n(&request, __ATOMIC_ACQUIRE);
    do {
        if (was & ~REQ_TABLES)
            return 0;
    } while (!__atomic_compare_exchange_n(&request, &was, was | r, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
    futex(&request, FUTEX_WAKE, 1, NULL);
    return 1;
}

int writer_request_tables(void)
{
    return post(REQ_TABLES) < 0 ? -1 : 0;
}

int writer_request_stop(int sig, pid_t tid, void (*restore)(void))
{
    stop_tid = tid;
    stop_restore = restore;
    /* A request already made (an exit under way) ends the process too. */
    return post(REQ_STOP | (uint32_t)sig << 8) < 0 ? -1 : 0;
}

static int64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int writer_final_write(int timeout_ms)
{
    if (post(REQ_EXIT) < 0)
        return WRITER_NONE;
    int64_t deadline = monotonic_ms() + timeout_ms;
    while (!__atomic_load_n(&finished, __ATOMIC_ACQUIRE)) {
        int64_t left = deadline - monotonic_ms();
        if (left <= 0)
            return -1;
        struct timespec wait = { left / 1000, (left % 1000) * 1000000 };
        futex(&finished, FUTEX_WAIT, 0, &wait);
    }
    return 0;
}

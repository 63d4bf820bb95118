/*
 * sigcount.c - counts the SIGTRAPs a profiled process takes, for
 * bench/native.sh. Preloaded in front of libwasp.so, it interposes
 * sigaction(): when SIGTRAP's SA_SIGINFO handler is installed it keeps the
 * real handler and installs a wrapper that bumps a counter and calls it.
 * At exit it appends "<pid> <count>\n" to the file named by $BENCH_SIGCOUNT.
 *
 * Why: with empty-handler=1 the library returns before it counts anything and
 * writes no profile, yet the delivery cost per signal needs the number of
 * signals. The wrapper adds one relaxed atomic add per signal (nanoseconds,
 * against tens of microseconds of delivery), and it is preloaded in every
 * profiled run, full or empty, so both see the same conditions.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef void (*siginfo_handler)(int, siginfo_t *, void *);

static atomic_ulong count;
static siginfo_handler real_handler;

static void counting_handler(int sig, siginfo_t *si, void *uc)
{
    atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
    real_handler(sig, si, uc);
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    static sigaction_fn real;
    if (!real)
        real = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
    if (sig == SIGTRAP && act && (act->sa_flags & SA_SIGINFO) && act->sa_sigaction &&
        act->sa_sigaction != counting_handler) {
        struct sigaction wrapped = *act;
        real_handler = act->sa_sigaction;
        wrapped.sa_sigaction = counting_handler;
        return real(sig, &wrapped, old);
    }
    return real(sig, act, old);
}

__attribute__((destructor)) static void report(void)
{
    const char *path = getenv("BENCH_SIGCOUNT");
    char line[64];
    if (!path || !*path)
        return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    int n = snprintf(line, sizeof(line), "%d %lu\n", (int)getpid(), atomic_load(&count));
    if (write(fd, line, (size_t)n) != n)
        perror("sigcount: write");
    close(fd);
}

/*
 * bench.h - shared by the workloads: bench_main_done() records the CPU time
 * the process has used when main is about to return, so bench/native.sh can
 * tell the work done after it (atexit handlers, destructors: where wasp
 * writes and symbolizes the main thread's profile) from the run itself.
 * It appends "<pid> <user+sys seconds>\n" to $BENCH_MAINCPU, if set.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

static inline void bench_main_done(void)
{
    const char *path = getenv("BENCH_MAINCPU");
    struct rusage ru;
    FILE *f;
    if (!path || !*path || getrusage(RUSAGE_SELF, &ru) != 0 || !(f = fopen(path, "a")))
        return;
    fprintf(f, "%d %.6f\n", (int)getpid(),
            ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
    fclose(f);
}

#endif

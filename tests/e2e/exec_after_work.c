/*
 * exec_after_work.c - works for a while, then execs another program
 * (wasp e2e test: the work done before exec must be in the profile).
 *
 * exec_after_work WAY PROGRAM [ARGS...] (at most 6 ARGS): runs kernel() (the silent-store
 * plant of silent_store.c, 50%) for ~0.3 s of CPU in main, then replaces
 * itself by PROGRAM through execv (WAY "v"), execvp ("vp") or execl ("l").
 * Expected: the pid's directory holds the pre-exec image's profile (with
 * its samples) besides the new image's, and the new image inherits no
 * descriptor of wasp's (it can list /proc/self/fd to show it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define N 4096

__attribute__((noinline)) void kernel(long *a, long n, long r)
{
    for (long i = 0; i < n; i++)
        a[i] = (i & 64) ? r : 7; /* PLANT: exec-work */
}

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    long *a = calloc(N, sizeof(long));
    for (long r = 0; cpu_seconds() < 0.3; r++)
        kernel(a, N, r);
    fflush(stdout);
    if (!strcmp(argv[1], "v"))
        execv(argv[2], &argv[2]);
    else if (!strcmp(argv[1], "vp"))
        execvp(argv[2], &argv[2]);
    else if (argc <= 9)   /* execl takes its arguments one by one: up to 7 after PROGRAM */
        execl(argv[2], argv[2], argv[3], argv[4], argv[5], argv[6], argv[7], argv[8], (char *)NULL);
    perror("exec");
    return 127;
}

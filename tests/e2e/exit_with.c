/*
 * exit_with.c - a profiled program that ends in a chosen way (wasp e2e).
 *
 * Usage: exit_with CODE    work ~0.2 s, then exit(CODE)
 *        exit_with -SIG    work ~0.2 s, then kill itself with signal SIG
 *
 * Plants nothing: the suite checks that `wasp run` exits with CODE, or with
 * 128 + SIG, like a shell would, and uses its profile for the damaged-profile
 * cases of `wasp report`. The work is a silent-store loop like
 * silent_store.c's, so a profile is written.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#define N 2048

__attribute__((noinline)) void work(long *a, long n, long r)
{
    for (long i = 0; i < n; i++)
        a[i] = (i & 64) ? r : 7;
}

int main(int argc, char **argv)
{
    int code = argc > 1 ? atoi(argv[1]) : 0;
    long *a = calloc(N, sizeof(long));
    if (!a)
        return 1;
    for (long r = 0; r < 150000; r++)
        work(a, N, r);
    fflush(stdout);
    if (code < 0) {
        signal(-code, SIG_DFL);
        raise(-code);
        return 1; /* not reached for a fatal signal */
    }
    free(a);
    return code;
}

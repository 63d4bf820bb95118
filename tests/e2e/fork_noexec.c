/*
 * fork_noexec.c - a forked child that does the work without exec (wasp e2e).
 *
 * Usage: fork_noexec exit|_exit [SCALE]
 *
 * Plants: the parent fork()s and only waits; the child, which is the same
 * program image (no exec), runs child_kernel(), whose one store instruction
 * at the line marked "PLANT: fork-noexec" writes 7 (silent) to elements of
 * even blocks of 64 and the round number (not silent) to odd blocks, exactly
 * as silent_store.c does. The child then ends with exit(0) or with _exit(0)
 * as the first argument says; _exit is how forked children usually end
 * (it skips the parent's atexit handlers and stdio buffers).
 *
 * Analytic program fraction: 50%, all of it from the child (the parent does
 * nothing but wait, so it has almost no samples and no pairs). The report
 * must hold the pair <child_kernel, child_kernel> at the PLANT line, however
 * the child ended.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 2048

__attribute__((noinline)) void child_kernel(long *a, long n, long r)
{
    for (long i = 0; i < n; i++)
        a[i] = (i & 64) ? r : 7; /* PLANT: fork-noexec */
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "exit") != 0 && strcmp(argv[1], "_exit") != 0)) {
        fprintf(stderr, "usage: fork_noexec exit|_exit [SCALE]\n");
        return 2;
    }
    long rounds = (long)(900000 * (argc > 2 ? atof(argv[2]) : 1.0));
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        long *a = calloc(N, sizeof(long));
        if (!a)
            _exit(1);
        for (long r = 0; r < rounds; r++)
            child_kernel(a, N, r);
        if (strcmp(argv[1], "_exit") == 0)
            _exit(a[N - 1] == rounds - 1 ? 0 : 1);
        exit(a[N - 1] == rounds - 1 ? 0 : 1);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid)
        return 1;
    printf("fork_noexec: child %ld rounds, ended with %s, status %d\n", rounds, argv[1], status);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

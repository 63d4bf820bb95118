/*
 * fork_child.c - a profiled parent that starts a profiled child (wasp e2e).
 *
 * Usage: fork_child CHILD [SCALE]
 *
 * Plants: the parent fork()s and the child exec()s CHILD (the e2e suite
 * passes the silent_store binary, with SCALE), so the child is a second
 * process, profiled through the inherited LD_PRELOAD/WASP_OPTIONS into the
 * same run directory. While the child runs, the parent runs its own
 * silent-store kernel, parent_kernel(), whose one store instruction is at
 * the line marked "PLANT: fork-parent" (7 to even blocks of 64: silent; the
 * round to odd blocks: not silent). Then it waits for the child and exits
 * with 0 only if the child exited with 0.
 *
 * Analytic program fraction: 50%. Each process is 50% silent on its own (see
 * silent_store.c), so whatever their shares of the samples the merged
 * program fraction is 50%. The report must hold both pairs: <parent_kernel,
 * parent_kernel> at this file's PLANT line and <kernel, kernel> at
 * silent_store.c's PLANT line, from two process directories.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 2048

__attribute__((noinline)) void parent_kernel(long *a, long n, long r)
{
    for (long i = 0; i < n; i++)
        a[i] = (i & 64) ? r : 7; /* PLANT: fork-parent */
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: fork_child CHILD [SCALE]\n");
        return 2;
    }
    const char *scale_arg = argc > 2 ? argv[2] : "1";
    long rounds = (long)(900000 * atof(scale_arg));
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        execl(argv[1], argv[1], scale_arg, (char *)NULL);
        perror("exec");
        _exit(127);
    }
    long *a = calloc(N, sizeof(long));
    long sum = 0;
    if (!a)
        return 1;
    for (long r = 0; r < rounds; r++)
        parent_kernel(a, N, r);
    for (long i = 0; i < N; i++)
        sum += a[i];
    free(a);
    int status;
    if (waitpid(pid, &status, 0) != pid)
        return 1;
    printf("fork_child: parent %ld rounds, checksum %ld, child status %d\n", rounds, sum, status);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

/*
 * partial.c - a run whose profiles cannot all be written.
 *
 * `partial N exit` starts N short threads one after another (each runs the
 * silent-store kernel for a few ms and ends, so its profile is written at
 * its end) and exits: on a full disk most of those writes fail.
 * `partial N kill` does the same, then starts one more thread, prints
 * "ready PID" and spins until the test kills it with SIGKILL: the spinning
 * thread's and main's profiles are written by the process's guardian after
 * it (and never, when the guardian is killed with it). Either way the run
 * may be incomplete, and `wasp report` must say how many profiles are
 * missing and why (the test asserts on files, messages and exit codes, not
 * on pairs).
 * `partial N raw` does the same, but main works a while (~100 ms) and ends
 * the process with a raw exit_group system call, as every Go program does:
 * no atexit handler runs, and only the guardian can write main's and the
 * spinning thread's profiles.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define N 2048

__attribute__((noinline)) void kernel(long *a, long n, long r)
{
    for (long i = 0; i < n; i++)
        a[i] = (i & 64) ? r : 7;
}

static void *work(void *forever)
{
    long *a = calloc(N, sizeof(long));
    for (long r = 0; a && (forever || r < 2000); r++)
        kernel(a, N, r);
    free(a);
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 3;
    int kill_me = argc > 2 && strcmp(argv[2], "kill") == 0;
    int raw = argc > 2 && strcmp(argv[2], "raw") == 0;
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, work, NULL) != 0 || pthread_join(t, NULL) != 0)
            return 2;
    }
    if (!kill_me && !raw)
        return 0;
    pthread_t t;
    if (pthread_create(&t, NULL, work, (void *)1) != 0)
        return 2;
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    if (raw) {
        work(NULL);
        syscall(SYS_exit_group, 0);
    }
    work((void *)1);
    return 1;
}

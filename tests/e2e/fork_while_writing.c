/*
 * fork_while_writing.c - forks children (no exec) while other threads end
 * and write their profiles (wasp e2e test: a child forked while another
 * thread held wasp's symbol-table lock inherited it locked and deadlocked
 * at its own exit).
 *
 * Worker threads run kernel() (the silent-store plant, 50%) for a few ms
 * each and end, one after another, so profiles with pairs are written all
 * the time; meanwhile main forks 100 children that run kernel() briefly
 * and exit. Expected: exit 0 within seconds, every child reaped with
 * status 0, prints "fork_while_writing: 100 children".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N 2048
#define CHILDREN 100

static volatile int stop;

__attribute__((noinline)) void kernel(long *a, long n, long r)
{
    for (long i = 0; i < n; i++)
        a[i] = (i & 64) ? r : 7; /* PLANT: fork-writing */
}

static void work(double secs)
{
    struct timespec t0, t;
    long *a = calloc(N, sizeof(long));
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    for (long r = 0; a; r++) {
        kernel(a, N, r);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        if ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 > secs)
            break;
    }
    free(a);
}

static void *worker(void *unused)
{
    work(0.005);
    return unused;
}

static void *churn(void *unused)
{
    while (!stop) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker, NULL) == 0)
            pthread_join(t, NULL);
    }
    return unused;
}

int main(void)
{
    pthread_t c;
    int ok = 0;
    pthread_create(&c, NULL, churn, NULL);
    for (int i = 0; i < CHILDREN; i++) {
        pid_t p = fork();
        if (p == 0) {
            work(0.002);
            exit(0);
        }
        int status;
        if (p > 0 && waitpid(p, &status, 0) == p && WIFEXITED(status) && WEXITSTATUS(status) == 0)
            ok++;
    }
    stop = 1;
    pthread_join(c, NULL);
    printf("fork_while_writing: %d children\n", ok);
    return ok == CHILDREN ? 0 : 1;
}

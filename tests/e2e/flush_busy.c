/*
 * flush_busy.c - busy threads that run until stopped (wasp e2e, flush.sh).
 *
 * Usage: flush_busy THREADS SECONDS END [CPU_FILE]
 *   THREADS threads store into arrays of their own; the program ends by
 *   END: "exit" (the threads stop after SECONDS seconds of wall-clock
 *   time, main joins them and returns 0), "segv" (after SECONDS seconds
 *   main stores through a null pointer, the threads still busy: SIGSEGV,
 *   default action, no handler), "wait" (runs on until killed), or "fork"
 *   (like exit, but meanwhile main forks child after child, each busy for
 *   20 ms and then exiting: forks land during checkpoints).
 *   With CPU_FILE, main rewrites it every second (and just before the
 *   crash) with one line per busy thread, "TID CPU_NS": what each had used
 *   by then, for the test to compare with the checkpoints.
 *
 * Plants nothing: tests/e2e/flush.sh checks that the checkpoints of a
 * killed or crashed run hold most of each thread's samples, and that a
 * normal end counts each thread once.
 */
#define _GNU_SOURCE   /* gettid */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N 4096
#define MAX_THREADS 16

static double seconds;
static pid_t tids[MAX_THREADS];
/* NULL, read at run time: the compiler cannot drop the store through it. */
long *volatile nowhere;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void fill(volatile long *a, long n, long r)
{
    for (long i = 0; i < n; i++)
        a[i] = (i & 64) ? r : 7;
}

static void *worker(void *arg)
{
    volatile long *a = arg;
    double end = now() + seconds;
    for (long r = 0; now() < end; r++)
        fill(a, N, r);
    return NULL;
}

struct start {
    long *a;
    int k;
};

static void *start_worker(void *arg)
{
    struct start s = *(struct start *)arg;
    free(arg);
    __atomic_store_n(&tids[s.k], gettid(), __ATOMIC_RELEASE);
    return worker(s.a);
}

/* Written aside and renamed: the test never reads half a file. */
static void write_cpu(const char *path, const pthread_t *t, int n)
{
    char tmp[4096];
    if (!path || snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return;
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    for (int k = 0; k < n; k++) {
        clockid_t id;
        struct timespec ts;
        if (pthread_getcpuclockid(t[k], &id) == 0 && clock_gettime(id, &ts) == 0)
            fprintf(f, "%d %lld\n", (int)__atomic_load_n(&tids[k], __ATOMIC_ACQUIRE),
                    (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
    }
    if (fclose(f) == 0)
        rename(tmp, path);
}

/* Children forked one after another until the threads are done; the
 * number of them that exited 0, or -1. */
static int fork_children(void)
{
    int n = 0;
    long a[N];
    for (double end = now() + seconds; now() < end;) {
        pid_t pid = fork();
        if (pid == 0) {
            for (double stop = now() + 0.02; now() < stop;)
                fill(a, N, 1);
            exit(0);
        }
        int status;
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            return -1;
        n++;
    }
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: flush_busy THREADS SECONDS exit|segv|wait [CPU_FILE]\n");
        return 2;
    }
    int n = atoi(argv[1]);
    const char *end = argv[3], *cpu = argc == 5 ? argv[4] : NULL;
    int ends = !strcmp(end, "exit") || !strcmp(end, "fork");
    seconds = ends ? atof(argv[2]) : 1e9;
    pthread_t t[MAX_THREADS];
    if (n < 1 || n > MAX_THREADS)
        return 2;
    for (int k = 0; k < n; k++) {
        struct start *s = malloc(sizeof(*s));
        long *a = calloc(N, sizeof(long));
        if (!s || !a)
            return 1;
        *s = (struct start){ a, k };
        if (pthread_create(&t[k], NULL, start_worker, s) != 0)
            return 1;
    }
    if (!strcmp(end, "fork")) {
        int forks = fork_children();
        if (forks < 0)
            return 3;
        printf("flush_busy: %d forks\n", forks);
    } else if (!ends) {
        /* By the clock: sleep() ends early at any handled signal. */
        double at = strcmp(end, "segv") ? 1e18 : now() + atof(argv[2]);
        for (double next = now() + 1; now() < at; usleep(20000)) {
            if (now() >= next) {
                write_cpu(cpu, t, n);
                next += 1;
            }
        }
        write_cpu(cpu, t, n);
        *nowhere = 1;   /* SIGSEGV */
    }
    for (int k = 0; k < n; k++)
        pthread_join(t[k], NULL);
    printf("flush_busy: %d threads, %.1f s\n", n, seconds);
    return 0;
}

/*
 * many_fds.c - many live threads, each opening a file (wasp e2e test of the
 * fd budget).
 *
 * THREADS threads start and wait at a barrier, so all are alive at once;
 * then each opens /dev/null and keeps it open until all have tried. Every
 * profiled thread costs wasp slots + 1 perf fds; under `ulimit -n 1024`
 * 300 profiled threads would need 1500, so without a budget either the
 * program's open() or wasp fails. The program exits 0 only when every one
 * of its own opens succeeded.
 *
 * Usage: many_fds [THREADS]   (default 300)
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_barrier_t started, opened;
static int failures;

static void *worker(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&started);
    int fd = open("/dev/null", O_RDONLY);
    if (fd < 0)
        __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
    pthread_barrier_wait(&opened);
    if (fd >= 0)
        close(fd);
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 300;
    pthread_t *tids = calloc((size_t)n, sizeof(*tids));
    if (!tids || n < 1)
        return 2;
    pthread_barrier_init(&started, NULL, (unsigned)n);
    pthread_barrier_init(&opened, NULL, (unsigned)n);
    for (int i = 0; i < n; i++) {
        if (pthread_create(&tids[i], NULL, worker, NULL) != 0) {
            fprintf(stderr, "many_fds: cannot create thread %d\n", i);
            return 2;
        }
    }
    for (int i = 0; i < n; i++)
        pthread_join(tids[i], NULL);
    printf("many_fds: %d threads, %d failed opens\n", n, failures);
    free(tids);
    return failures ? 1 : 0;
}

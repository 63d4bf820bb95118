/*
 * end_at_exit.c - worker threads that end while the process exits (wasp
 * e2e test).
 *
 * Usage: end_at_exit SECONDS
 * Eight workers run a planted silent store for SECONDS; then main tells
 * them to stop and calls exit() at once, without joining them, as servers
 * stopped by a signal often do. Each worker's end writes its profile (it
 * has pairs: naming its frames takes milliseconds) while the exit-time
 * write runs: the exit must wait for those writes, or their threads are
 * left with no final profile (Tomcat stopped by SIGTERM: 12 of 31).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define N 4096
static volatile int stop;

__attribute__((noinline)) static void update(int *a, const int *v)
{
    for (int i = 0; i < N; i++)
        a[i] = v[(i >> 6) & 3];   /* PLANT: ender */
}

static void *work(void *arg)
{
    int *a = calloc(N, sizeof(int)), v[4] = { 5, 5, 5, 0 };
    for (int r = 0; !stop; r++) {
        v[3] = -r;
        update(a, v);
    }
    free(a);
    return arg;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.5;
    pthread_t t[8];
    for (int i = 0; i < 8; i++)
        if (pthread_create(&t[i], NULL, work, NULL) != 0)
            return 1;
    usleep((useconds_t)(secs * 1e6));
    stop = 1;
    printf("end_at_exit: stopping\n");
    fflush(stdout);
    exit(0);
}

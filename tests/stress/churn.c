/*
 * churn.c - 1000 short threads, 8 alive at a time (tests/stress/run:
 * thread_churn). Each thread burns about 1 ms of CPU and allocates; wasp
 * must write each one's profile exactly once, at its end, while the others
 * start and stop around it.
 *
 * Usage: churn THREADS AT_ONCE
 */
#include "stress.h"

static void *worker(void *arg)
{
    stress_note_thread();
    stress_burn(1.0);
    stress_malloc_work(200);
    return arg;
}

int main(int argc, char **argv)
{
    int total = argc > 1 ? atoi(argv[1]) : 1000, at_once = argc > 2 ? atoi(argv[2]) : 8, started = 0;
    pthread_t t[64];
    stress_note_thread();
    if (at_once < 1 || at_once > 64)
        return 2;
    while (started < total) {
        int n = 0;
        for (; n < at_once && started < total; n++, started++)
            if (pthread_create(&t[n], NULL, worker, NULL) != 0) {
                fprintf(stderr, "pthread_create failed at thread %d\n", started);
                return 3;
            }
        for (int i = 0; i < n; i++)
            pthread_join(t[i], NULL);
    }
    printf("churn: %d threads started and joined\n", started);
    stress_facts();
    return 0;
}

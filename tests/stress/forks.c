/*
 * forks.c - 100 children forked without exec (tests/stress/run: fork_noexec).
 *
 * While main forks, another thread keeps starting short threads, so that
 * a fork often lands while a thread of the parent is writing its profile
 * (holding whatever locks that takes). Each child burns a little CPU and
 * ends with exit() (even children) or _exit() (odd ones), with status
 * i % 100; the parent prints the sum of the statuses it reaped, which is
 * the same in every run. Every process prints its own "#fact proc" line.
 *
 * Usage: forks CHILDREN
 */
#include <sys/wait.h>
#include "stress.h"

static volatile int stop_churn;

static void *short_thread(void *arg)
{
    stress_note_thread();
    stress_burn(0.5);
    return arg;
}

static void *churner(void *arg)
{
    stress_note_thread();
    while (!stop_churn) {
        pthread_t t;
        if (pthread_create(&t, NULL, short_thread, NULL) == 0)
            pthread_join(t, NULL);
    }
    return arg;
}

static void child(int i)
{
    stress_ntids = 0;
    stress_note_thread();
    stress_burn(2.0);
    stress_malloc_work(500);
    stress_facts();
    if (i % 2)
        _exit(i % 100);
    exit(i % 100);
}

int main(int argc, char **argv)
{
    int children = argc > 1 ? atoi(argv[1]) : 100, reaped = 0;
    long status_sum = 0;
    pthread_t churn;
    stress_note_thread();
    if (pthread_create(&churn, NULL, churner, NULL) != 0)
        return 3;
    for (int i = 0; i < children; i++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0)
            return 4;
        if (pid == 0)
            child(i);
        if (i % 4 == 3 || i == children - 1)   /* up to 4 alive at once */
            for (int status; wait(&status) > 0; reaped++)
                status_sum += WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
    }
    stop_churn = 1;
    pthread_join(churn, NULL);
    printf("forks: %d children reaped, status sum %ld\n", reaped, status_sum);
    stress_facts();
    return 0;
}

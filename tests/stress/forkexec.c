/*
 * forkexec.c - fork+exec and posix_spawn storms (tests/stress/run:
 * fork_exec). The parent starts CHILDREN copies of itself in "child"
 * mode, 4 at a time: even ones by fork, a millisecond of work, then execv
 * (the pre-exec image is a profiled process of its own: it says so with a
 * "#fact proc" line before exec), odd ones by posix_spawn (no fork
 * handlers run). Every child exits with status 3.
 *
 * Usage: forkexec CHILDREN | forkexec child
 */
#include <spawn.h>
#include <sys/wait.h>
#include "stress.h"

extern char **environ;

static int child_main(void)
{
    stress_note_thread();
    stress_burn(2.0);
    stress_facts();
    return 3;
}

static pid_t start_child(const char *self, int i)
{
    char *args[] = { (char *)self, "child", NULL };
    pid_t pid;
    if (i % 2)
        return posix_spawn(&pid, self, NULL, NULL, args, environ) == 0 ? pid : -1;
    fflush(stdout);
    pid = fork();
    if (pid != 0)
        return pid;
    stress_ntids = 0;
    stress_note_thread();
    stress_burn(1.0);
    stress_facts();
    execv(self, args);
    _exit(127);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return child_main();
    int children = argc > 1 ? atoi(argv[1]) : 100, reaped = 0, threes = 0;
    stress_note_thread();
    for (int i = 0; i < children; i++) {
        if (start_child("/proc/self/exe", i) < 0)
            return 4;
        if (i % 4 == 3 || i == children - 1)
            for (int status; wait(&status) > 0; reaped++)
                threes += WIFEXITED(status) && WEXITSTATUS(status) == 3;
    }
    printf("forkexec: %d children reaped, %d exited with 3\n", reaped, threes);
    stress_facts();
    return 0;
}

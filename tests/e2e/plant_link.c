/*
 * plant_link.c - plants a symbolic link where wasp is about to create a
 * file, then execs a command in the same process (so with the same pid):
 * the hostile user of issue 11, who knows the names wasp used to derive
 * from pids. Linked statically, so libwasp.so is not loaded into it and
 * only the exec'd command creates anything.
 *
 *   plant_link piddir DIR TARGET -- CMD...   DIR/<pid> -> TARGET
 *   plant_link tmp DIR TARGET -- CMD...      DIR/<pid>/ made, and
 *                 DIR/<pid>/<pid>-0.wasp.tmp.<pid>.<pid> -> TARGET
 *                 (the old temp name of the main thread's first profile)
 *   plant_link report FILE TARGET -- CMD...  FILE.tmp.<pid> -> TARGET
 *                 (the old temp name of `wasp report -o FILE`)
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    char path[4096];
    int pid = (int)getpid();
    if (argc < 6 || strcmp(argv[4], "--") != 0) {
        fprintf(stderr, "usage: plant_link piddir|tmp|report PATH TARGET -- CMD...\n");
        return 2;
    }
    if (!strcmp(argv[1], "piddir")) {
        snprintf(path, sizeof path, "%s/%d", argv[2], pid);
    } else if (!strcmp(argv[1], "tmp")) {
        snprintf(path, sizeof path, "%s/%d", argv[2], pid);
        mkdir(path, 0700);
        snprintf(path, sizeof path, "%s/%d/%d-0.wasp.tmp.%d.%d", argv[2], pid, pid, pid, pid);
    } else {
        snprintf(path, sizeof path, "%s.tmp.%d", argv[2], pid);
    }
    if (symlink(argv[3], path) != 0) {
        perror(path);
        return 2;
    }
    execvp(argv[5], argv + 5);
    perror(argv[5]);
    return 127;
}

/*
 * measure.c - runs one command and prints what it cost, for bench/native.sh:
 *
 *   measure [-e NAME=VALUE]... -- CMD [ARGS...]
 *   prints one line: "pid wall_s user_s sys_s maxrss_kb exit_status other_s steal_s"
 *
 * The -e settings go into the child's environment only, so LD_PRELOAD of
 * libwasp.so never applies to this wrapper itself. Times come from
 * CLOCK_MONOTONIC around fork/wait4 and from the child's rusage (user, sys,
 * peak RSS), i.e. the same numbers /usr/bin/time prints, at µs resolution.
 * CMD's stdout goes to /dev/null, so the result line is all stdout holds;
 * CMD's stderr is left alone.
 *
 * other_s and steal_s tell how quiet the machine was: the CPU time the whole
 * machine spent busy during the run minus CMD's own (other processes, kernel
 * threads), and the time the hypervisor stole, both from /proc/stat deltas
 * (clock-tick resolution, 10 ms). A noisy neighbour shows up there.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds(struct timeval tv) { return tv.tv_sec + tv.tv_usec / 1e6; }

/* Busy and steal ticks of all CPUs so far, from /proc/stat's "cpu" line. */
static void machine_ticks(unsigned long long *busy, unsigned long long *steal)
{
    unsigned long long v[8] = { 0 };  /* user nice system idle iowait irq softirq steal */
    FILE *f = fopen("/proc/stat", "r");
    *busy = *steal = 0;
    if (!f)
        return;
    if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
               &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
        *busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
        *steal = v[7];
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    int i = 1;
    struct timespec t0, t1;
    struct rusage ru;
    int status;
    unsigned long long busy0, steal0, busy1, steal1;
    double tick = (double)sysconf(_SC_CLK_TCK);

    while (i < argc && strcmp(argv[i], "--") != 0)
        i++;
    if (i >= argc - 1) {
        fprintf(stderr, "usage: measure [-e NAME=VALUE]... -- CMD [ARGS...]\n");
        return 2;
    }
    machine_ticks(&busy0, &steal0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0) {
        perror("measure: fork");
        return 2;
    }
    if (pid == 0) {
        for (int j = 1; j < i; j++)
            if (strcmp(argv[j], "-e") == 0 && j + 1 < i)
                putenv(argv[++j]);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, STDOUT_FILENO);
        execvp(argv[i + 1], &argv[i + 1]);
        perror("measure: exec");
        _exit(127);
    }
    if (wait4(pid, &status, 0, &ru) < 0) {
        perror("measure: wait4");
        return 2;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    machine_ticks(&busy1, &steal1);
    double wall = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    double user = seconds(ru.ru_utime), sys = seconds(ru.ru_stime);
    double other = (busy1 - busy0) / tick - (user + sys);
    printf("%d %.6f %.6f %.6f %ld %d %.2f %.2f\n", (int)pid, wall, user, sys, ru.ru_maxrss,
           WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), other > 0 ? other : 0.0,
           (steal1 - steal0) / tick);
    return 0;
}

/*
 * sandbox.c - a program that sandboxes itself with a seccomp filter while
 * it works (wasp e2e test: sandbox_*).
 *
 * `sandbox prctl|syscall|exec` runs the silent-store kernel for a while,
 * installs a filter that kills the process at process_vm_readv or
 * perf_event_open (system calls only a profiler makes here; sandboxes
 * refuse what they do not expect), through prctl or libc's syscall() (as
 * libseccomp does), then works as long again. `exec` then execs itself as
 * `sandbox after`, which works a little under the inherited filter. Each
 * prints one line at its end: wasp must neither kill it (SIGSYS) nor start
 * in the exec'd image, and must have written the profile of the work
 * before the filter.
 */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define N 2048

__attribute__((noinline)) void kernel(long *a, long n, long r)
{
    for (long i = 0; i < n; i++)
        a[i] = (i & 64) ? r : 7; /* PLANT: sandbox-silent */
}

static long work(long rounds)
{
    static long a[N];
    for (long r = 0; r < rounds; r++)
        kernel(a, N, r);
    return a[100];
}

static int sandbox(const char *how)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_perf_event_open, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof f / sizeof f[0], f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    if (!strcmp(how, "prctl"))
        return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "prctl";
    long rounds = argc > 2 ? atol(argv[2]) : 100000;
    if (!strcmp(how, "after")) {
        printf("sandbox: after exec %ld\n", work(rounds / 10));
        return 0;
    }
    long before = work(rounds);
    if (sandbox(how) != 0) {
        perror("sandbox: seccomp");
        return 2;
    }
    long after = work(rounds);
    printf("sandbox: %s %ld %ld\n", how, before, after);
    fflush(stdout);
    if (!strcmp(how, "exec")) {
        char *args[] = { argv[0], "after", argv[2] ? argv[2] : "100000", NULL };
        execv("/proc/self/exe", args);
        perror("sandbox: exec");
        return 3;
    }
    return 0;
}

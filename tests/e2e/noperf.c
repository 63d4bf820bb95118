/*
 * noperf.c - runs a command where perf_event_open fails with EACCES, as under
 * Docker's default seccomp profile. Lets the tests check that wasp says what
 * is wrong and that a preloaded program runs on, unprofiled.
 *
 * usage: noperf CMD [ARGS...]
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static long raw_prctl(long option, long mode, void *prog)
{
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"((long)SYS_prctl), "D"(option), "S"(mode), "d"(prog)
                     : "rcx", "r11", "memory");
    if (ret < 0) {
        errno = (int)-ret;
        return -1;
    }
    return ret;
}

int main(int argc, char **argv)
{
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_perf_event_open, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { .len = sizeof(filter) / sizeof(filter[0]), .filter = filter };
    if (argc < 2) {
        fprintf(stderr, "usage: noperf CMD [ARGS...]\n");
        return 2;
    }
    /* The filter stands for the container's, set before the program runs:
     * installed by a raw system call, which wasp (preloaded here too) does
     * not see, and not by prctl(), which would make wasp stop profiling
     * this process and what it execs (src/native/sandbox.c). */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || raw_prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
        perror("noperf: seccomp");
        return 2;
    }
    execvp(argv[1], argv + 1);
    perror("noperf: exec");
    return 127;
}

/*
 * raw_syscall.h - a system call without libc: no errno, no cancellation
 * point, no wrapper that may itself be interposed.
 *
 * For code that must not touch the calling thread's libc state (the
 * guardian runs on the TLS of a thread that is not its own) and for wasp's
 * own `syscall` (sandbox.c), which cannot call the one it replaces.
 * Returns the kernel's answer: -errno on failure. x86-64 only.
 */
#ifndef WASP_RAW_SYSCALL_H
#define WASP_RAW_SYSCALL_H

static inline long raw_syscall6(long nr, long a, long b, long c, long d, long e, long f)
{
    long ret;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}

static inline long raw_syscall(long nr, long a, long b, long c, long d, long e)
{
    return raw_syscall6(nr, a, b, c, d, e, 0);
}

#endif

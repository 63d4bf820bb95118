/*
 * sandbox.c - the program limits its own system calls (seccomp): wasp
 * writes its profiles and stops first.
 *
 * A sandbox (OpenSSH's privilege-separated child, a browser's renderer, a
 * daemon hardened with libseccomp) installs a filter that kills the process
 * at any system call not on its list. wasp's handlers, exit hooks and
 * thread hooks make system calls the program never makes
 * (process_vm_readv, perf ioctls, futex wake-ups): a sandboxed loop under
 * `wasp run` died of SIGSYS at its first sample after the filter, where it
 * ran to its end unprofiled. So a filter's installation, through prctl or
 * libc's syscall() (libseccomp uses both), is preceded by the exit-time
 * work: every profile written, every event stopped, the stop-signal
 * handlers given back, the guardian stopped; from then on nothing of wasp's
 * makes a system call in the process. A filter installed by a raw system
 * call instruction (Go, Chromium's own sandbox code) is not seen.
 *
 * Both wrappers make the system call themselves (raw_syscall.h): the one
 * they replace cannot be called, and looking it up with dlsym is not
 * async-signal-safe, as syscall() must be.
 */
#include <errno.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "native.h"
#include "raw_syscall.h"

static long with_errno(long ret)
{
    if (ret < 0 && ret > -4096) {
        errno = (int)-ret;
        return -1;
    }
    return ret;
}

int prctl(int option, ...)
{
    va_list ap;
    va_start(ap, option);
    unsigned long a = va_arg(ap, unsigned long), b = va_arg(ap, unsigned long),
                  c = va_arg(ap, unsigned long), d = va_arg(ap, unsigned long);
    va_end(ap);
    if (option == PR_SET_SECCOMP && (a == SECCOMP_MODE_FILTER || a == SECCOMP_MODE_STRICT))
        native_before_sandbox();
    return (int)with_errno(raw_syscall(SYS_prctl, option, (long)a, (long)b, (long)c, (long)d));
}

long syscall(long nr, ...)
{
    va_list ap;
    va_start(ap, nr);
    long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long), d = va_arg(ap, long),
         e = va_arg(ap, long), f = va_arg(ap, long);
    va_end(ap);
    if (nr == SYS_seccomp && (a == SECCOMP_SET_MODE_FILTER || a == SECCOMP_SET_MODE_STRICT))
        native_before_sandbox();
    return with_errno(raw_syscall6(nr, a, b, c, d, e, f));
}

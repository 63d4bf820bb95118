/*
 * exec_hook.c - a process that execs leaves the profile of what it did
 * before: every exec function is interposed to write it first.
 *
 * exec replaces the image: atexit never runs and every thread is gone, so
 * without this a program that worked for a while and then exec'd left only
 * the profile of the new image. The final write goes through the writer
 * (writer.c), as an exit does. If exec then fails, the process runs on
 * unprofiled. glibc's own execs (system, posix_spawn) run in a vfork child,
 * which is not ours to write (engine_owns_process tells), and the perf
 * events are removed at exec by the kernel (remove_on_exec).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <unistd.h>

#include "native.h"

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

extern char **environ;

/* The most arguments an execl call may pass here (the kernel's own limit
 * is far larger; a program passing more gets E2BIG, as from a full stack). */
#define MAX_EXECL_ARGS 4096

static void write_before_exec(void)
{
    native_write_before_exec();
}

int execve(const char *path, char *const argv[], char *const envp[])
{
    static execve_fn real;
    if (!real)
        real = (execve_fn)dlsym(RTLD_NEXT, "execve");
    write_before_exec();
    return real(path, argv, envp);
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
    static execvpe_fn real;
    if (!real)
        real = (execvpe_fn)dlsym(RTLD_NEXT, "execvpe");
    write_before_exec();
    return real(file, argv, envp);
}

int fexecve(int fd, char *const argv[], char *const envp[])
{
    static fexecve_fn real;
    if (!real)
        real = (fexecve_fn)dlsym(RTLD_NEXT, "fexecve");
    write_before_exec();
    return real(fd, argv, envp);
}

int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

int execvp(const char *file, char *const argv[])
{
    return execvpe(file, argv, environ);
}

/* Collects execl's arguments (arg0 ... NULL) into argv; the envp that
 * execle passes after the NULL goes to *envp when asked. */
static int collect(const char *arg0, va_list ap, char **argv, char ***envp)
{
    int n = 0;
    argv[n++] = (char *)arg0;
    while (arg0 && (argv[n] = va_arg(ap, char *)) != NULL)
        if (++n >= MAX_EXECL_ARGS) {
            errno = E2BIG;
            return -1;
        }
    if (envp)
        *envp = va_arg(ap, char **);
    return 0;
}

int execl(const char *path, const char *arg0, ...)
{
    char *argv[MAX_EXECL_ARGS + 1];
    va_list ap;
    va_start(ap, arg0);
    int rc = collect(arg0, ap, argv, NULL);
    va_end(ap);
    return rc < 0 ? -1 : execve(path, argv, environ);
}

int execlp(const char *file, const char *arg0, ...)
{
    char *argv[MAX_EXECL_ARGS + 1];
    va_list ap;
    va_start(ap, arg0);
    int rc = collect(arg0, ap, argv, NULL);
    va_end(ap);
    return rc < 0 ? -1 : execvpe(file, argv, environ);
}

int execle(const char *path, const char *arg0, ...)
{
    char *argv[MAX_EXECL_ARGS + 1];
    char **envp;
    va_list ap;
    va_start(ap, arg0);
    int rc = collect(arg0, ap, argv, &envp);
    va_end(ap);
    return rc < 0 ? -1 : execve(path, argv, envp);
}

/*
 * preload.c - the native front end's entry points when libwasp.so is
 * LD_PRELOADed by `wasp run`: start-up, every pthread, fork, and exit.
 *
 * Activates only when WASP_OPTIONS is set, so loading the library for any
 * other reason (as a JVM agent, say) starts nothing here, and stays out of
 * Java launchers: there the agent (JAVA_TOOL_OPTIONS) profiles Java threads,
 * and GC and compiler threads must not be profiled at all. On any failure it
 * prints one [wasp] ERROR line and the program runs on unprofiled.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "native.h"
#include "stop_signals.h"
#include "writer.h"

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static pthread_key_t thread_key;
static int profiling_natively;   /* set once the engine runs with the native front end */

struct start_args {
    void *(*fn)(void *);
    void *arg;
};

static int sandboxed;   /* the program limited its system calls: wasp makes none (sandbox.c) */

static void on_thread_exit(void *t)
{
    /* Stopping a thread's events takes system calls (close, sigaltstack,
     * munmap) a sandbox may not allow; once sandboxed, they stay as they are. */
    if (!__atomic_load_n(&sandboxed, __ATOMIC_ACQUIRE))
        engine_thread_end(t);
}

static void begin_this_thread(void)
{
    pthread_setspecific(thread_key, engine_thread_begin(NULL));
}

static void *thread_trampoline(void *p)
{
    struct start_args args = *(struct start_args *)p;
    free(p);
    begin_this_thread();
    return args.fn(args.arg);
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    static pthread_create_fn real;
    if (!real)
        real = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
    struct start_args *args = profiling_natively && engine_active() ? malloc(sizeof(*args)) : NULL;
    if (!args)
        return real(thread, attr, fn, arg);
    args->fn = fn;
    args->arg = arg;
    int rc = real(thread, attr, thread_trampoline, args);
    if (rc != 0)
        free(args);
    return rc;
}

static int has_library(struct dl_phdr_info *info, size_t size, void *name)
{
    (void)size;
    return info->dlpi_name && strstr(info->dlpi_name, name) != NULL;
}

/* The java launcher links libjli: the JVM it starts will load our agent. */
static int is_java_launcher(void)
{
    return dl_iterate_phdr(has_library, "/libjli.so") != 0;
}

static void on_fork_child(void)
{
    native_unwind_after_fork_child();
    /* The parent's writer did not come along: the child's stop signals
     * and exits need one of their own. */
    native_symbols_after_fork_child();
    func_table_after_fork_child();
    pthread_setspecific(thread_key, engine_after_fork_child(NULL));
    if (engine_active()) {
        writer_start();
        engine_guard();
    }
}

/* How long an exit waits for its profiles. exit() runs in normal context
 * and may have much to symbolize; _exit is often called from a signal
 * handler, where the writer may wait on a lock the interrupted code holds:
 * then the profiles are given up rather than the program hung. */
#define EXIT_WAIT_MS 60000
#define UNDERSCORE_EXIT_WAIT_MS 5000

static void on_exit_write_all(void)
{
    /* In a JVM the agent writes at VMDeath; a JVM calling _exit is dying. */
    if (!profiling_natively || !engine_owns_process())
        return;
    if (writer_final_write(EXIT_WAIT_MS) == WRITER_NONE)
        engine_shutdown();
}

void native_write_before_exec(void)
{
    on_exit_write_all();
    if (profiling_natively)
        engine_unguard();
}

static void say(const char *text)
{
    ssize_t rc = write(2, text, strlen(text));
    (void)rc;
}

/* The filter outlives exec: an image this process execs must not start
 * wasp, whose start-up makes system calls the filter may not allow. One
 * byte renames the variable in place (setenv would race with other
 * threads' getenv); LD_PRELOAD, which may name the user's own libraries
 * too, stays as it is. */
static void disable_in_later_images(void)
{
    extern char **environ;
    static const char name[] = "WASP_OPTIONS=";
    for (char **e = environ; e && *e; e++)
        if (!strncmp(*e, name, sizeof name - 1))
            (*e)[4] = '-';
}

void native_before_sandbox(void)
{
    if (!profiling_natively || !engine_owns_process() || __atomic_exchange_n(&sandboxed, 1, __ATOMIC_ACQ_REL))
        return;
    stop_signals_stop();
    if (writer_final_write(EXIT_WAIT_MS) == WRITER_NONE)
        engine_shutdown();
    engine_sandboxed();
    disable_in_later_images();
    say("[wasp] WARN the program is limiting its own system calls (a seccomp filter): its profiles "
        "were written up to here and the rest of the run is not profiled\n");
}

/* _exit skips atexit, and forked children usually end with it: have the
 * writer write the profiles first. Not in a vfork child, which runs on the
 * parent's memory (engine_owns_process tells). Async-signal-safe, as _exit
 * is: no dlsym, no stdio. */
__attribute__((noreturn)) static void exit_after_writing(int status)
{
    if (profiling_natively && engine_owns_process()) {
        int rc = writer_final_write(UNDERSCORE_EXIT_WAIT_MS);
        if (rc == WRITER_NONE)
            say("[wasp] WARN _exit in a process without a writer thread: its profiles are not written\n");
        else if (rc < 0)
            say("[wasp] WARN _exit: the profiles could not be written in time (a lock held by the "
                "interrupted code?); the process ends without them\n");
    }
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}

void _exit(int status)
{
    exit_after_writing(status);
}

void _Exit(int status)
{
    exit_after_writing(status);
}

__attribute__((constructor)) static void preload_start(void)
{
    const char *text = getenv("WASP_OPTIONS");
    wasp_options o;
    char err[512];

    if (!text || is_java_launcher())
        return;
    native_unwind_init();
    options_defaults(&o);
    if (options_parse(text, &o, err, sizeof(err)) < 0 ||
        engine_init(&o, &native_frontend, err, sizeof(err)) < 0) {
        fprintf(stderr, "[wasp] ERROR %s; the program runs unprofiled\n", err);
        return;
    }
    profiling_natively = 1;
    pthread_key_create(&thread_key, on_thread_exit);
    pthread_atfork(native_unwind_before_fork, native_unwind_after_fork_parent, on_fork_child);
    atexit(on_exit_write_all);
    if (writer_start() == 0)
        stop_signals_start();
    begin_this_thread();
    engine_checkpoints_start();
    engine_guard();
}

/*
 * stop_signals.c - a native program stopped by SIGINT, SIGTERM or SIGHUP
 * (^C, kill, a closed terminal) still leaves its profile.
 *
 * Those signals kill a process without running atexit, so every thread's
 * data would be lost. Where the program leaves such a signal at its default
 * action, wasp catches it: the handler only writes the signal and the
 * receiving thread's id into a pipe (async-signal-safe), and a watcher
 * thread, which blocks every signal, writes all profiles outside signal
 * context, restores the default action and sends the signal again to the
 * same thread, so the process dies by it exactly as it would have. A
 * program that installs its own handler replaces ours and ends as it
 * chooses (usually through exit, where the atexit writer runs).
 */
#include "stop_signals.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine.h"

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };
static int pipe_fds[2] = { -1, -1 };
static pid_t owner;   /* the process whose watcher reads the pipe */

struct stop_message {
    int sig;
    pid_t tid;
};

static void on_stop_signal(int sig)
{
    int saved = errno;
    struct stop_message m = { sig, (pid_t)syscall(SYS_gettid) };
    /* A vfork child shares our memory but not our watcher: die as usual. */
    if (getpid() != owner || write(pipe_fds[1], &m, sizeof(m)) != (ssize_t)sizeof(m)) {
        signal(sig, SIG_DFL);
        raise(sig);
    }
    errno = saved;
}

#define NSIGNALS (sizeof(stop_signals) / sizeof(stop_signals[0]))

static int has_handler(int sig, void (*h)(int))
{
    struct sigaction now;
    return sigaction(sig, NULL, &now) == 0 && !(now.sa_flags & SA_SIGINFO) && now.sa_handler == h;
}

/* Gives back the default action wherever ours is still installed. */
static void restore_defaults(void)
{
    for (size_t i = 0; i < NSIGNALS; i++)
        if (has_handler(stop_signals[i], on_stop_signal))
            signal(stop_signals[i], SIG_DFL);
}

static void *watch_stop_signals(void *unused)
{
    struct stop_message m;
    (void)unused;
    while (read(pipe_fds[0], &m, sizeof(m)) != (ssize_t)sizeof(m))
        if (errno != EINTR)
            return NULL;
    engine_shutdown();
    restore_defaults();
    if (syscall(SYS_tgkill, owner, m.tid, m.sig) < 0)
        kill(owner, m.sig);
    for (;;)
        pause();
    return NULL;
}

static void close_pipe(void)
{
    if (pipe_fds[0] >= 0) {
        close(pipe_fds[0]);
        close(pipe_fds[1]);
    }
    pipe_fds[0] = pipe_fds[1] = -1;
}

/* The watcher is started with the real pthread_create (it must not be
 * profiled) and with every signal blocked from its first instruction. */
static int start_watcher(void)
{
    pthread_create_fn real = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
    pthread_attr_t attr;
    pthread_t thread;
    sigset_t all, old;
    int rc;
    owner = getpid();
    if (!real || pipe2(pipe_fds, O_CLOEXEC) < 0)
        return -1;
    sigfillset(&all);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = real(&thread, &attr, watch_stop_signals, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0)
        close_pipe();
    return rc ? -1 : 0;
}

void stop_signals_start(void)
{
    int wanted = 0;
    for (size_t i = 0; i < NSIGNALS; i++)
        wanted |= has_handler(stop_signals[i], SIG_DFL);
    if (!wanted || start_watcher() < 0)
        return;
    for (size_t i = 0; i < NSIGNALS; i++) {
        struct sigaction ours;
        if (!has_handler(stop_signals[i], SIG_DFL))
            continue;
        memset(&ours, 0, sizeof(ours));
        ours.sa_handler = on_stop_signal;
        ours.sa_flags = SA_RESTART;
        sigemptyset(&ours.sa_mask);
        sigaction(stop_signals[i], &ours, NULL);
    }
}

void stop_signals_after_fork_child(void)
{
    /* The parent's pipe and watcher are not ours, but its handlers are
     * inherited: they need a watcher of this process. */
    int ours = 0;
    close_pipe();
    for (size_t i = 0; i < NSIGNALS; i++)
        ours |= has_handler(stop_signals[i], on_stop_signal);
    if (ours && start_watcher() < 0)
        restore_defaults();
}

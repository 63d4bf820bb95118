/*
 * stop_signals.c - a native program stopped by SIGINT, SIGTERM or SIGHUP
 * (^C, kill, a closed terminal) still leaves its profile.
 *
 * Those signals kill a process without running atexit, so every thread's
 * data would be lost. Where the program leaves such a signal at its default
 * action, wasp catches it: the handler only asks the writer thread
 * (writer.c) to write all profiles; the writer then restores the default
 * action and sends the signal again to the same thread, so the process dies
 * by it exactly as it would have. A program that installs its own handler
 * replaces ours and ends as it chooses (usually through exit, where the
 * final write runs too).
 */
#include "stop_signals.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "writer.h"

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define NSIGNALS (sizeof(stop_signals) / sizeof(stop_signals[0]))

static int has_handler(int sig, void (*h)(int))
{
    struct sigaction now;
    return sigaction(sig, NULL, &now) == 0 && !(now.sa_flags & SA_SIGINFO) && now.sa_handler == h;
}

static void on_stop_signal(int sig);

/* Gives back the default action wherever ours is still installed. */
static void restore_defaults(void)
{
    for (size_t i = 0; i < NSIGNALS; i++)
        if (has_handler(stop_signals[i], on_stop_signal))
            signal(stop_signals[i], SIG_DFL);
}

static void on_stop_signal(int sig)
{
    int saved = errno;
    if (writer_request_stop(sig, (pid_t)syscall(SYS_gettid), restore_defaults) < 0) {
        signal(sig, SIG_DFL);
        raise(sig);
    }
    errno = saved;
}

void stop_signals_start(void)
{
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

void stop_signals_stop(void)
{
    restore_defaults();
}

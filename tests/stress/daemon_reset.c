/*
 * daemon_reset.c - a daemon-style start (tests/stress/run: daemon_reset):
 * every signal back to SIG_DFL and none blocked, then two threads work.
 * Issue 10: wasp's next sample killed such a program (SIGTRAP at SIG_DFL:
 * exit 0 became 133, no profile). wasp must keep sampling.
 */
#include <signal.h>
#include "stress.h"

static void *worker(void *arg)
{
    stress_note_thread();
    stress_burn(300.0);
    return arg;
}

int main(void)
{
    sigset_t none;
    struct sigaction trap;
    pthread_t t;
    stress_note_thread();
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            signal(sig, SIG_DFL);   /* glibc's own signals refuse: EINVAL */
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 3;
    stress_burn(300.0);
    pthread_join(t, NULL);
    sigaction(SIGTRAP, NULL, &trap);
    printf("daemon_reset: done, SIGTRAP %s\n", trap.sa_handler == SIG_DFL ? "at SIG_DFL" : "NOT at SIG_DFL");
    stress_facts();
    return 0;
}

/*
 * exit_in_handler.c - a SIGALRM handler calls _exit while the main thread
 * is (very likely) inside malloc (wasp e2e test: wasp's _exit interposer
 * must not take malloc's or any lock from a signal handler; it used to hang
 * in 17 of 30 runs).
 *
 * A profiling timer fires every 100 us of CPU (in practice every tick of
 * the kernel, ~4 ms); after 50 of them (~0.2 s), its
 * handler calls _exit(7). Meanwhile main does nothing but malloc and free,
 * so the handler nearly always interrupts malloc holding its arena lock.
 * Expected: exit status 7, always, within a second.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t ticks;

static void on_alarm(int sig)
{
    (void)sig;
    if (++ticks >= 50)
        _exit(7);
}

int main(void)
{
    struct sigaction sa;
    struct itimerval every = { { 0, 100 }, { 0, 100 } };
    void *keep[64] = { 0 };
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPROF, &sa, NULL);
    setitimer(ITIMER_PROF, &every, NULL);
    for (unsigned long i = 0;; i++) {
        free(keep[i % 64]);
        keep[i % 64] = malloc(16 + (i * 7919) % 4000);
    }
}

/*
 * sigstorm.c - a program under a storm of its own signals (tests/stress/run:
 * signal_storm): SIGALRM from an interval timer every 100 us and SIGUSR1
 * sent by a thread every 100 us, both ~10 kHz, handled with SA_RESTART by
 * handlers that store to memory, while two threads do allocation-heavy
 * work of a fixed size. stdout is the work's checksum.
 *
 * Usage: sigstorm ROUNDS
 */
#include <signal.h>
#include <sys/time.h>
#include "stress.h"

static volatile sig_atomic_t alarms, usr1s, done;
static volatile uint64_t scratch[64];

static void on_signal(int sig)
{
    if (sig == SIGALRM)
        alarms++;
    else
        usr1s++;
    for (int i = 0; i < 64; i++)
        scratch[i] = (uint64_t)sig + (uint64_t)i;
}

static void *sender(void *arg)
{
    struct timespec ts = { 0, 100000 };
    stress_note_thread();
    while (!done) {
        kill(getpid(), SIGUSR1);
        nanosleep(&ts, NULL);
    }
    return arg;
}

static void *worker(void *rounds)
{
    stress_note_thread();
    return (void *)(uintptr_t)stress_malloc_work((long)(uintptr_t)rounds);
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 2000000;
    struct sigaction sa;
    struct itimerval it = { { 0, 100 }, { 0, 100 } };
    pthread_t send, work;
    void *other;
    stress_note_thread();
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    setitimer(ITIMER_REAL, &it, NULL);
    if (pthread_create(&send, NULL, sender, NULL) != 0 ||
        pthread_create(&work, NULL, worker, (void *)(uintptr_t)rounds) != 0)
        return 3;
    uint64_t mine = stress_malloc_work(rounds);
    pthread_join(work, &other);
    done = 1;
    pthread_join(send, NULL);
    it = (struct itimerval){ { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &it, NULL);
    printf("sigstorm: checksum %llu %llu\n", (unsigned long long)mine, (unsigned long long)(uintptr_t)other);
    dprintf(2, "sigstorm: %d SIGALRM, %d SIGUSR1 handled\n", (int)alarms, (int)usr1s);
    stress_facts();
    return 0;
}

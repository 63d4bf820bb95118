/*
 * own_sigtrap.c - a program with its own ideas about SIGTRAP (wasp e2e test:
 * wasp's samples arrive as SIGTRAP too, and must neither reach the program
 * nor be lost because of what it does).
 *
 * own_sigtrap MODE; each mode runs ~0.3 s of CPU (so wasp samples it) and
 * exits with the status given below, printing what it saw. The suite runs
 * every mode with and without wasp: status and output must be the same,
 * and under wasp the profile must hold samples.
 *   handler    counts its own raise(SIGTRAP)s in a sigaction handler: 10 -> exit 42
 *   resethand  SA_RESETHAND handler: the first raise is handled, the second
 *              kills the process by SIGTRAP
 *   default    SIGTRAP reset to SIG_DFL: exit 0
 *   reset_all  every signal reset to SIG_DFL, as daemons do: exit 0
 *   ignore     SIGTRAP ignored, then raised: exit 0
 *   block      every signal blocked; the mask read back still shows SIGTRAP: exit 0
 *   sigwait    every signal blocked, a thread sigwaits on all of them: exit 0
 *   foreign    its own perf task-clock event with sigtrap and sig_data 0x10:
 *              its handler sees those signals (and only its own): exit 0
 *   timer      its own POSIX CPU-time timer sends it SIGTRAP (SI_TIMER, value
 *              0x20), as wasp's ctimer sampler does: its handler sees its
 *              own (and only its own): exit 0
 *   raw        after 0.2 s, SIGTRAP ignored by a raw rt_sigaction system call, which no
 *              library sees: the program wins (exit 0) and wasp's profile
 *              says sampling stopped
 */
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t own_traps, foreign_traps, timer_traps, others;
static volatile long sink[512];

/* The thread's CPU clock is a system call: read every 512 stores, it
 * kept the thread in the kernel most of its time, where the task clock
 * gives no sample (raw took 17-40 samples in its 0.1 s, for >= 20 asked). */
static void spin(double secs)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    do {
        for (int k = 0; k < 64; k++)
            for (long i = 0; i < 512; i++)
                sink[i] = i;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
}

static void count_trap(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    if (si->si_code == SI_TKILL || si->si_code == SI_USER)
        own_traps++;
    else if (si->si_code == 6 /* TRAP_PERF */ && *(uint64_t *)((char *)si + 24) == 0x10)
        foreign_traps++;
    else if (si->si_code == SI_TIMER && si->si_value.sival_int == 0x20)
        timer_traps++;
    else
        others++;
}

static void install(int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = count_trap;
    sa.sa_flags = SA_SIGINFO | flags;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTRAP, &sa, NULL);
}

static int mode_handler(void)
{
    install(0);
    for (int i = 0; i < 10; i++) {
        spin(0.03);
        raise(SIGTRAP);
    }
    printf("handler: own %d, others %d\n", (int)own_traps, (int)others);
    return own_traps == 10 && others == 0 ? 42 : 1;
}

static int mode_resethand(void)
{
    install(SA_RESETHAND);
    spin(0.15);
    raise(SIGTRAP);
    printf("resethand: handled %d\n", (int)own_traps);
    fflush(stdout);
    spin(0.15);
    raise(SIGTRAP);   /* the default action now: the process dies here */
    return 0;
}

static int mode_reset_all(void)
{
    for (int s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP)
            signal(s, SIG_DFL);
    spin(0.3);
    printf("reset_all: alive\n");
    return 0;
}

static int mode_block(void)
{
    sigset_t all, now;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
    spin(0.3);
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("block: SIGTRAP blocked as asked: %s\n", sigismember(&now, SIGTRAP) == 1 ? "yes" : "no");
    return sigismember(&now, SIGTRAP) == 1 ? 0 : 3;
}

static void *wait_all(void *unused)
{
    sigset_t all;
    int sig;
    sigfillset(&all);
    sigwait(&all, &sig);
    printf("sigwait: got %s\n", sig == SIGUSR1 ? "SIGUSR1" : "another signal");
    return unused;
}

static int mode_sigwait(void)
{
    sigset_t all;
    pthread_t t;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pthread_create(&t, NULL, wait_all, NULL);
    spin(0.3);
    kill(getpid(), SIGUSR1);
    pthread_join(t, NULL);
    return 0;
}

static int mode_foreign(void)
{
    struct perf_event_attr a;
    install(0);
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = 5000000;    /* 5 ms of CPU: ~60 in the 0.3 s spin */
    a.exclude_kernel = 1;
    a.sigtrap = 1;
    a.remove_on_exec = 1;
    a.sig_data = 0x10;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    if (fd < 0) {
        printf("foreign: perf_event_open failed\n");
        return 0;
    }
    spin(0.3);
    close(fd);
    printf("foreign: own perf traps seen: %s, others %d\n", foreign_traps >= 5 ? "yes" : "no", (int)others);
    return foreign_traps >= 5 && others == 0 ? 0 : 4;
}

static int mode_timer(void)
{
    struct sigevent se;
    timer_t tm;
    struct itimerspec every = { { 0, 5000000 }, { 0, 5000000 } };   /* 5 ms of CPU */
    install(0);
    memset(&se, 0, sizeof(se));
    se.sigev_notify = SIGEV_SIGNAL;
    se.sigev_signo = SIGTRAP;
    se.sigev_value.sival_int = 0x20;
    if (timer_create(CLOCK_PROCESS_CPUTIME_ID, &se, &tm) != 0 || timer_settime(tm, 0, &every, NULL) != 0) {
        printf("timer: timer_create failed\n");
        return 0;
    }
    spin(0.3);
    timer_delete(tm);
    printf("timer: own timer traps seen: %s, others %d\n", timer_traps >= 5 ? "yes" : "no", (int)others);
    return timer_traps >= 5 && others == 0 ? 0 : 5;
}

/* The kernel's struct for rt_sigaction: handler, flags, restorer, mask. */
struct kernel_sigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)(void);
    uint64_t mask;
};

static int mode_raw(void)
{
    struct kernel_sigaction ign = { SIG_IGN, 0, NULL, 0 };
    spin(0.2);   /* >= 20 samples on a 100 Hz tick too (the ctimer sampler's) */
    syscall(SYS_rt_sigaction, SIGTRAP, &ign, NULL, sizeof(ign.mask));
    spin(0.2);
    printf("raw: alive\n");
    return 0;
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(m, "handler")) return mode_handler();
    if (!strcmp(m, "resethand")) return mode_resethand();
    if (!strcmp(m, "default")) { signal(SIGTRAP, SIG_DFL); spin(0.3); printf("default: alive\n"); return 0; }
    if (!strcmp(m, "reset_all")) return mode_reset_all();
    if (!strcmp(m, "ignore")) { signal(SIGTRAP, SIG_IGN); spin(0.3); raise(SIGTRAP); printf("ignore: alive\n"); return 0; }
    if (!strcmp(m, "block")) return mode_block();
    if (!strcmp(m, "sigwait")) return mode_sigwait();
    if (!strcmp(m, "foreign")) return mode_foreign();
    if (!strcmp(m, "timer")) return mode_timer();
    if (!strcmp(m, "raw")) return mode_raw();
    fprintf(stderr, "usage: own_sigtrap handler|resethand|default|reset_all|ignore|block|sigwait|foreign|timer|raw\n");
    return 2;
}

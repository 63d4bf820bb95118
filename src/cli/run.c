/*
 * run.c - `wasp run [options] -- CMD [ARGS...]`.
 *
 * Validates the options with the library's own parser, makes sure -o DIR
 * can be written, then runs CMD with libwasp.so in LD_PRELOAD and the
 * (escaped) options in WASP_OPTIONS (run_env.c), so every process
 * CMD starts (children, exec'd programs) profiles into the same run
 * directory. The exit status of CMD is wasp's exit status.
 */
#include "run.h"
#include "run_exact.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "guardian.h"
#include "options.h"
#include "perf.h"
#include "run_check.h"
#include "run_dir.h"
#include "run_env.h"
#include "pmu_events.h"
#include "sampler.h"
#include "signal_cost.h"
#include "switch_cost.h"
#include "watch_check.h"

#define RUN_USAGE "usage: wasp run [--mode dead-store|silent-store|silent-load] " \
                  "[--sampler auto|pmu|software|ctimer] [--interval T] [--period N] [--budget P|off] " \
                  "[--slots 1-4] [--fp-tolerance F] [--stack include|exclude] [--flush T|off] " \
                  "[--no-watch-check] " \
                  "[-o DIR] -- CMD [ARGS...]\n" \
                  "       wasp run --exact [--mode ...] [--fp-tolerance F] [--stack include|exclude] " \
                  "[--exact-limit N|Ts] [-o DIR] -- CMD [ARGS...]"

typedef struct run_args {
    char options[OPTIONS_MAX_TEXT];   /* key=value,... as the library parses it */
    char dir[PATH_MAX];
    char **command;
    int no_watch_check;
    int exact;              /* --exact: every access, under Valgrind (run_exact.c) */
    char exact_limit[64];   /* --exact-limit, "" when not given */
    const char *sampled_flag;   /* a flag only the sampled mode has, for the --exact check */
} run_args;

static int usage_error(const char *fmt, const char *what)
{
    fprintf(stderr, "[wasp] ERROR ");
    fprintf(stderr, fmt, what);
    fprintf(stderr, "\n%s\n", RUN_USAGE);
    return 2;
}

/* Values are escaped (options_escape): a ',' or '=' in a path stays in it. */
int run_append_option(char *options, size_t size, const char *key, const char *value)
{
    char esc[OPTIONS_MAX_TEXT];
    size_t len = strlen(options);
    if (options_escape(value, esc, sizeof(esc)) < 0)
        return -1;
    int n = snprintf(options + len, size - len, "%s%s=%s", len ? "," : "", key, esc);
    return n < 0 || (size_t)n >= size - len ? -1 : 0;
}

static int append_option(run_args *a, const char *key, const char *value)
{
    return run_append_option(a->options, sizeof(a->options), key, value);
}

const char *run_flag_key(const char *flag)
{
    static const char *const map[][2] = {
        { "--mode", "mode" }, { "--interval", "interval" }, { "--slots", "slots" },
        { "--fp-tolerance", "fp-tolerance" }, { "-o", "dir" }, { "--output", "dir" },
        { "--sampler", "sampler" }, { "--period", "period" }, { "--stack", "stack" },
        { "--budget", "budget" },
        { "--flush", "flush" },
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(flag, map[i][0]) == 0)
            return map[i][1];
    return NULL;
}

static int parse_args(int argc, char **argv, run_args *a)
{
    int i;
    memset(a, 0, sizeof(*a));
    /* Not free (all of wasp-PID-2 to -9999 taken): the check says so. */
    if (run_dir_default(a->dir, sizeof(a->dir)) < 0)
        snprintf(a->dir, sizeof(a->dir), "wasp-%d", (int)getpid());
    for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *flag = argv[i];
        if (strcmp(flag, "--no-watch-check") == 0) {
            a->no_watch_check = 1;
            continue;
        }
        if (strcmp(flag, "--exact") == 0) {
            a->exact = 1;
            continue;
        }
        const char *value = strchr(flag, '=');
        char name[64];
        if (value && flag[0] == '-' && (size_t)(value - flag) < sizeof(name)) {
            snprintf(name, sizeof(name), "%.*s", (int)(value - flag), flag);
            flag = name;
            value++;
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            value = NULL;
        }
        if (strcmp(flag, "--exact-limit") == 0 && value) {
            if (snprintf(a->exact_limit, sizeof(a->exact_limit), "%s", value) >= (int)sizeof(a->exact_limit))
                return usage_error("--exact-limit '%s' is too long", value);
            continue;
        }
        const char *key = run_flag_key(flag);
        if (key && (!strcmp(key, "sampler") || !strcmp(key, "interval") || !strcmp(key, "period") ||
                    !strcmp(key, "slots") || !strcmp(key, "budget") || !strcmp(key, "flush")))
            a->sampled_flag = key;
        if (!key)
            return usage_error(flag[0] == '-' ? "unknown option '%s'" :
                               "'%s' is not an option — put the command after --", flag);
        if (!value)
            return usage_error("option '%s' needs a value", flag);
        if (strcmp(key, "dir") == 0 && !*value)
            return usage_error("%s", "-o needs a directory, not an empty string — give e.g. -o prof");
        if (strcmp(key, "dir") == 0)
            snprintf(a->dir, sizeof(a->dir), "%s", value);
        else if (append_option(a, key, value) < 0)
            return usage_error("option '%s' is too long", flag);
    }
    if (i >= argc - 1)
        return usage_error("%s", "no command given — write: wasp run [options] -- CMD [ARGS...]");
    a->command = &argv[i + 1];
    if (a->exact && a->sampled_flag)
        return usage_error("--exact watches every access, so --%s does not apply — drop one of them",
                           a->sampled_flag);
    if (!a->exact && a->exact_limit[0])
        return usage_error("%s", "--exact-limit needs --exact — add --exact or drop the limit");
    return 0;
}

static int absolute_dir(run_args *a)
{
    char cwd[PATH_MAX];
    if (a->dir[0] == '/')
        return 0;
    if (!getcwd(cwd, sizeof(cwd)))
        return -1;
    size_t lc = strlen(cwd), ld = strlen(a->dir);
    if (lc + 1 + ld >= sizeof(a->dir))
        return -1;
    memmove(a->dir + lc + 1, a->dir, ld + 1);
    memcpy(a->dir, cwd, lc);
    a->dir[lc] = '/';
    return 0;
}

/* libwasp.so sits at ../lib/ relative to the wasp binary. */
static int locate_library(char *out, size_t len)
{
    char exe[PATH_MAX];
    struct stat st;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    if ((size_t)(slash - exe) + sizeof("/../lib/libwasp.so") > len)
        return -1;
    memcpy(out, exe, (size_t)(slash - exe));
    memcpy(out + (slash - exe), "/../lib/libwasp.so", sizeof("/../lib/libwasp.so"));
    /* Canonical: "bin/../lib" would reach the environment as it is. */
    char real[PATH_MAX];
    if (stat(out, &st) != 0 || !realpath(out, real) || strlen(real) >= len)
        return -1;
    memcpy(out, real, strlen(real) + 1);
    return 0;
}

int run_find_library(char *out, size_t len)
{
    if (locate_library(out, len) == 0)
        return 0;
    fprintf(stderr, "[wasp] ERROR cannot find libwasp.so next to the wasp binary — run `make` or reinstall\n");
    return -1;
}

#define RUN_GUARDIAN_WAIT_S 65   /* a guardian's monitor ends its write by 60 s */

static volatile pid_t running_child;

/* `timeout 60 wasp run -- server` or a service manager stops wasp: pass it
 * on, so the program ends (writing its profile) and wasp reports its status. */
static void forward_signal(int sig)
{
    int saved = errno;
    if (running_child > 0)
        kill(running_child, sig);
    errno = saved;
}

int run_wait(pid_t child)
{
    int status;
    pid_t pid;
    /* Like a shell: the terminal's ^C goes to the child; we wait for it. */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    running_child = child;
    signal(SIGTERM, forward_signal);
    signal(SIGHUP, forward_signal);
    /* Any child: as the run's subreaper we also reap the orphans handed to
     * us meanwhile (guardians that wrote for their ended process, daemons
     * that ended), or thousands of short processes would leave zombies. */
    while ((pid = waitpid(-1, &status, __WALL)) != child)
        if (pid < 0 && errno != EINTR)
            return 1;
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

/* Whether pid, a child of ours, is a guardian (guardian.h). */
static int is_guardian(pid_t pid)
{
    char path[64], comm[32] = "";
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    int ok = fgets(comm, sizeof comm, f) != NULL;
    fclose(f);
    comm[strcspn(comm, "\n")] = '\0';
    return ok && strcmp(comm, GUARDIAN_NAME) == 0;
}

/* One guardian child still alive, or 0. */
static pid_t a_live_guardian(void)
{
    char path[64];
    pid_t found = 0;
    snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    int pid;
    while (!found && fscanf(f, "%d", &pid) == 1)
        if (is_guardian(pid))
            found = pid;
    fclose(f);
    return found;
}

/* The program has ended; a process of it that ended without its exit
 * handlers has its guardian writing its profiles (it was handed to us, the
 * subreaper, when its process ended): the report must wait for them. A
 * guardian's monitor cuts its write (3 s without progress, 60 s in all);
 * this wait has a deadline too. */
static void wait_for_guardians(void)
{
    struct timespec pause = { 0, 10 * 1000 * 1000 };
    for (int i = 0; i < RUN_GUARDIAN_WAIT_S * 100; i++) {
        pid_t g = a_live_guardian();
        if (!g)
            return;
        if (waitpid(g, NULL, WNOHANG | __WALL) == 0)
            nanosleep(&pause, NULL);
    }
}

/* Breakpoints that open but never trap (some hypervisors) would give a run
 * with samples and no pairs: refuse before starting CMD, unless the user
 * asked to go on; then the library must not refuse again. */
static int check_watches(char *options, size_t size, int no_watch_check, const wasp_options *o)
{
    watch_check c;
    char what[512];
    enum watch_verdict v = watch_check_run(o->slots, &c);
    if (v == WATCH_FIRES)
        return 0;
    watch_check_describe(&c, what, sizeof(what));
    if (v == WATCH_PARTIAL) {
        fprintf(stderr, "[wasp] WARN %s\n", what);
        return 0;
    }
    if (!no_watch_check) {
        fprintf(stderr, "[wasp] ERROR %s (--no-watch-check runs anyway, for samples only)\n", what);
        return -1;
    }
    fprintf(stderr, "[wasp] WARN %s; running anyway (--no-watch-check): expect samples and no pairs\n", what);
    return run_append_option(options, size, "watch-check", "off");
}

/* What one sampler signal costs here (measured, ~60 ms) goes to the
 * library: the overhead budget charges it per signal (budget.h). Intervals
 * under a millisecond are also checked against it: a program sampled
 * faster than the machine can deliver and handle signals would barely
 * run. Such an interval is lengthened to the floor, with one WARN line.
 * *interval is the interval the run will use. */
#define FLOOR_CHECK_BELOW_NS 1000000ULL

static int pass_signal_cost(char *options, size_t size, const wasp_options *o, const sampler *s,
                            uint64_t *interval)
{
    char value[32];
    uint64_t cost = signal_cost_ns(), floor = signal_cost_floor_ns(cost);
    *interval = o->interval_ns;
    if (cost) {
        snprintf(value, sizeof(value), "%lluns", (unsigned long long)cost);
        if (run_append_option(options, size, "signal-cost", value) < 0)
            return -1;
    }
    if (s == &sampler_pmu || o->interval_ns >= FLOOR_CHECK_BELOW_NS || o->interval_ns >= floor)
        return 0;
    fprintf(stderr, "[wasp] WARN --interval %.0fus is shorter than this machine sustains (one sampler "
            "signal costs %.1fus of CPU here): sampling every %.0fus instead\n",
            (double)o->interval_ns / 1e3, (double)cost / 1e3, (double)floor / 1e3);
    *interval = floor;
    snprintf(value, sizeof(value), "%lluns", (unsigned long long)floor);
    return run_append_option(options, size, "interval", value);
}

/* What wasp's events add to each context switch of a sampled thread
 * (switch_cost.h, 65-120 ms): every profile charges its thread's
 * switches with it. The task-clock sampler's part depends on its interval;
 * the ctimer sampler has none (its timer is not switched); the PMU
 * sampler's is not measured. 1 ns stands for none measured. */
static int pass_switch_cost(char *options, size_t size, const wasp_options *o, const sampler *s,
                            uint64_t interval)
{
    char value[32];
    switch_cost c;
    if (switch_cost_measure(o->slots, s == &sampler_software ? interval : 0, &c) < 0)
        return 0;
    snprintf(value, sizeof(value), "%lluns", (unsigned long long)(c.base_ns ? c.base_ns : 1));
    if (run_append_option(options, size, "switch-cost", value) < 0)
        return -1;
    snprintf(value, sizeof(value), "%lluns", (unsigned long long)(c.floor_ns ? c.floor_ns : 1));
    if (run_append_option(options, size, "switch-floor-cost", value) < 0)
        return -1;
    snprintf(value, sizeof(value), "%lluns", (unsigned long long)(c.armed_ns ? c.armed_ns : 1));
    return run_append_option(options, size, "switch-armed-cost", value);
}

/* The kernel's tick, on which the ctimer sampler's timers fire (~20 ms).
 * Where a CPU-time timer never fired, auto takes the task clock. */
static int pass_tick(char *options, size_t size, const wasp_options *o, const sampler **s)
{
    char value[32];
    uint64_t tick = *s == &sampler_ctimer ? ctimer_tick_ns() : 0;
    if (!tick) {
        if (*s == &sampler_ctimer && o->sampler == SAMPLER_AUTO)
            *s = &sampler_software;
        return 0;
    }
    snprintf(value, sizeof(value), "%lluns", (unsigned long long)tick);
    return run_append_option(options, size, "tick", value);
}

int run_check_machine(const wasp_options *o, int no_watch_check, char *options, size_t size)
{
    char err[512];
    /* Fail before starting anything: a program that runs unprofiled while
     * the user waits for a profile is the worst outcome. */
    if (perf_probe(o->slots, err, sizeof(err)) < 0) {
        fprintf(stderr, "[wasp] ERROR %s\n", err);
        return -1;
    }
    /* Resolve auto here and hand the answer down, so a run says once, not
     * once per process, which sampler it uses and why. */
    const sampler *s = sampler_select(o, PMU_SYSFS_ROOT, err, sizeof(err));
    if (!s) {
        fprintf(stderr, "[wasp] ERROR hardware sampling unavailable: %s\n", err);
        return -1;
    }
    uint64_t interval;
    if (check_watches(options, size, no_watch_check, o) < 0 || pass_tick(options, size, o, &s) < 0 ||
        pass_signal_cost(options, size, o, s, &interval) < 0 ||
        pass_switch_cost(options, size, o, s, interval) < 0)
        return -1;
    if (o->sampler == SAMPLER_AUTO && s != &sampler_pmu)
        fprintf(stderr, "[wasp] INFO using the software sampler: %s\n", err);
    if (run_append_option(options, size, "sampler", s->name) < 0) {
        fprintf(stderr, "[wasp] ERROR options too long\n");
        return -1;
    }
    return 0;
}

int run_main(int argc, char **argv)
{
    run_args a;
    wasp_options o;
    char err[512], lib[PATH_MAX];
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    options_defaults(&o);
    if (options_parse(a.options, &o, err, sizeof(err)) < 0)
        return usage_error("%s", err);
    if (a.exact) {
        if (absolute_dir(&a) < 0)
            return usage_error("output directory path too long: %s", a.dir);
        return run_exact(&o, a.dir, a.command, a.exact_limit[0] ? a.exact_limit : NULL);
    }
    if (run_check_machine(&o, a.no_watch_check, a.options, sizeof(a.options)) < 0)
        return 2;
    if (run_find_library(lib, sizeof(lib)) < 0)
        return 2;
    if (absolute_dir(&a) < 0 || append_option(&a, "dir", a.dir) < 0) {
        fprintf(stderr, "[wasp] ERROR output directory path too long: %s\n", a.dir);
        return 2;
    }
    /* Found out now, not after the program ran for an hour. */
    if (run_dir_check(a.dir, err, sizeof(err)) < 0 || run_env_set(lib, a.options, err, sizeof(err)) < 0) {
        fprintf(stderr, "[wasp] ERROR %s\n", err);
        return 2;
    }
    char exe[PATH_MAX];
    int is_static = run_check_static(a.command[0], exe, sizeof(exe));
    if (is_static)
        fprintf(stderr, "[wasp] WARN %s is statically linked: LD_PRELOAD cannot load wasp into it, "
                "so only dynamically linked programs it starts are profiled — link it dynamically "
                "to profile it, or use wasp run --exact (every access, under Valgrind: no preload)\n", exe);
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    pid_t child = fork();
    if (child < 0) {
        fprintf(stderr, "[wasp] ERROR cannot fork: %s\n", strerror(errno));
        return 2;
    }
    if (child == 0) {
        execvp(a.command[0], a.command);
        fprintf(stderr, "[wasp] ERROR cannot run %s: %s — check the command and PATH\n",
                a.command[0], strerror(errno));
        _exit(127);
    }
    rc = run_wait(child);
    wait_for_guardians();
    run_check_outcome(a.dir, rc, is_static, a.command[0]);
    return rc;
}

int run_parse_options(int argc, char **argv, char *err, size_t errlen)
{
    run_args a;
    wasp_options o;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    options_defaults(&o);
    if (append_option(&a, "dir", a.dir) < 0 || options_parse(a.options, &o, err, errlen) < 0)
        return 2;
    return 0;
}

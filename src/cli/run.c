/*
 * run.c - `wasp run [options] -- CMD [ARGS...]`.
 *
 * Validates the options with the library's own parser, then runs CMD with
 * libwasp.so in LD_PRELOAD and the options in WASP_OPTIONS, so every process
 * CMD starts (children, exec'd programs) profiles into the same run
 * directory. The exit status of CMD is wasp's exit status.
 */
#include "run.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "options.h"
#include "perf.h"
#include "run_check.h"
#include "pmu_events.h"
#include "sampler.h"
#include "signal_cost.h"
#include "watch_check.h"

#define RUN_USAGE "usage: wasp run [--mode dead-store|silent-store|silent-load] " \
                  "[--sampler auto|pmu|software] [--interval T] [--period N] " \
                  "[--slots 1-4] [--fp-tolerance F] [--stack include|exclude] [--no-watch-check] " \
                  "[-o DIR] -- CMD [ARGS...]"

typedef struct run_args {
    char options[1024];   /* key=value,... as the library parses it */
    char dir[PATH_MAX];
    char **command;
    int no_watch_check;
} run_args;

static int usage_error(const char *fmt, const char *what)
{
    fprintf(stderr, "[wasp] ERROR ");
    fprintf(stderr, fmt, what);
    fprintf(stderr, "\n%s\n", RUN_USAGE);
    return 2;
}

static int append_option(run_args *a, const char *key, const char *value)
{
    size_t len = strlen(a->options);
    int n = snprintf(a->options + len, sizeof(a->options) - len, "%s%s=%s", len ? "," : "", key, value);
    return n < 0 || (size_t)n >= sizeof(a->options) - len ? -1 : 0;
}

static const char *flag_key(const char *flag)
{
    static const char *const map[][2] = {
        { "--mode", "mode" }, { "--interval", "interval" }, { "--slots", "slots" },
        { "--fp-tolerance", "fp-tolerance" }, { "-o", "dir" }, { "--output", "dir" },
        { "--sampler", "sampler" }, { "--period", "period" }, { "--stack", "stack" },
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
    snprintf(a->dir, sizeof(a->dir), "wasp-%d", (int)getpid());
    for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *flag = argv[i];
        if (strcmp(flag, "--no-watch-check") == 0) {
            a->no_watch_check = 1;
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
        const char *key = flag_key(flag);
        if (!key)
            return usage_error(flag[0] == '-' ? "unknown option '%s'" :
                               "'%s' is not an option — put the command after --", flag);
        if (!value)
            return usage_error("option '%s' needs a value", flag);
        if (strcmp(key, "dir") == 0)
            snprintf(a->dir, sizeof(a->dir), "%s", value);
        else if (append_option(a, key, value) < 0)
            return usage_error("option '%s' is too long", flag);
    }
    if (i >= argc - 1)
        return usage_error("%s", "no command given — write: wasp run [options] -- CMD [ARGS...]");
    a->command = &argv[i + 1];
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
static int find_library(char *out, size_t len)
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
    return stat(out, &st) == 0 ? 0 : -1;
}

/* Native programs get the library through LD_PRELOAD, every JVM through
 * JAVA_TOOL_OPTIONS (the preloaded copy stands aside in Java launchers), so
 * scripts that start java themselves are covered too. */
static int set_environment(run_args *a, const char *lib)
{
    char preload[PATH_MAX * 2], tool[PATH_MAX * 3];
    const char *old = getenv("LD_PRELOAD"), *old_tool = getenv("JAVA_TOOL_OPTIONS");
    if (append_option(a, "dir", a->dir) < 0)
        return -1;
    snprintf(preload, sizeof(preload), "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
    if ((size_t)snprintf(tool, sizeof(tool), "-agentpath:%s=%s%s%s", lib, a->options,
                         old_tool && *old_tool ? " " : "", old_tool ? old_tool : "") >= sizeof(tool))
        return -1;
    return setenv("LD_PRELOAD", preload, 1) | setenv("WASP_OPTIONS", a->options, 1) |
           setenv("JAVA_TOOL_OPTIONS", tool, 1);
}

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

static int wait_for(pid_t child)
{
    int status;
    /* Like a shell: the terminal's ^C goes to the child; we wait for it. */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    running_child = child;
    signal(SIGTERM, forward_signal);
    signal(SIGHUP, forward_signal);
    while (waitpid(child, &status, 0) < 0)
        if (errno != EINTR)
            return 1;
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

/* Breakpoints that open but never trap (some hypervisors) would give a run
 * with samples and no pairs: refuse before starting CMD, unless the user
 * asked to go on; then the library must not refuse again. */
static int check_watches(run_args *a, const wasp_options *o)
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
    if (!a->no_watch_check) {
        fprintf(stderr, "[wasp] ERROR %s (--no-watch-check runs anyway, for samples only)\n", what);
        return -1;
    }
    fprintf(stderr, "[wasp] WARN %s; running anyway (--no-watch-check): expect samples and no pairs\n", what);
    return append_option(a, "watch-check", "off");
}

/* Intervals under a millisecond are checked against what one signal costs
 * here (measured, ~60 ms): a program sampled faster than the machine can
 * deliver and handle signals would barely run. Such an interval is
 * lengthened to the floor, with one WARN line. */
#define FLOOR_CHECK_BELOW_NS 1000000ULL

static int check_interval_floor(run_args *a, const wasp_options *o)
{
    char value[32];
    if (o->sampler == SAMPLER_PMU || o->interval_ns >= FLOOR_CHECK_BELOW_NS)
        return 0;
    uint64_t cost = signal_cost_ns(), floor = signal_cost_floor_ns(cost);
    if (o->interval_ns >= floor)
        return 0;
    fprintf(stderr, "[wasp] WARN --interval %.0fus is shorter than this machine sustains (one sampler "
            "signal costs %.1fus of CPU here): sampling every %.0fus instead\n",
            (double)o->interval_ns / 1e3, (double)cost / 1e3, (double)floor / 1e3);
    snprintf(value, sizeof(value), "%lluns", (unsigned long long)floor);
    return append_option(a, "interval", value);
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
    /* Fail before starting anything: a program that runs unprofiled while
     * the user waits for a profile is the worst outcome. */
    if (perf_probe(o.slots, err, sizeof(err)) < 0) {
        fprintf(stderr, "[wasp] ERROR %s\n", err);
        return 2;
    }
    /* Resolve auto here and hand the answer down, so a run says once, not
     * once per process, which sampler it uses and why. */
    const sampler *s = sampler_select(&o, PMU_SYSFS_ROOT, err, sizeof(err));
    if (!s) {
        fprintf(stderr, "[wasp] ERROR hardware sampling unavailable: %s\n", err);
        return 2;
    }
    if (check_watches(&a, &o) < 0 || check_interval_floor(&a, &o) < 0)
        return 2;
    if (o.sampler == SAMPLER_AUTO && s != &sampler_pmu)
        fprintf(stderr, "[wasp] INFO using the software sampler: %s\n", err);
    if (append_option(&a, "sampler", s->name) < 0)
        return usage_error("%s", "options too long");
    if (find_library(lib, sizeof(lib)) < 0) {
        fprintf(stderr, "[wasp] ERROR cannot find libwasp.so next to the wasp binary — run `make` or reinstall\n");
        return 2;
    }
    if (absolute_dir(&a) < 0 || set_environment(&a, lib) < 0) {
        fprintf(stderr, "[wasp] ERROR output directory path too long: %s\n", a.dir);
        return 2;
    }
    char exe[PATH_MAX];
    int is_static = run_check_static(a.command[0], exe, sizeof(exe));
    if (is_static)
        fprintf(stderr, "[wasp] WARN %s is statically linked: LD_PRELOAD cannot load wasp into it, "
                "so only dynamically linked programs it starts are profiled — link it dynamically "
                "to profile it\n", exe);
    size_t before = run_check_count_profiles(a.dir);
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
    rc = wait_for(child);
    if (run_check_count_profiles(a.dir) > before)
        fprintf(stderr, "[wasp] profile in %s — view it with: wasp report %s\n", a.dir, a.dir);
    else if (rc > 128 && !is_static)
        fprintf(stderr, "[wasp] ERROR no profile was written to %s: %s was killed by signal %d "
                "before it could write (only SIGINT, SIGTERM and SIGHUP let wasp write first)\n",
                a.dir, a.command[0], rc - 128);
    else if (rc != 127)
        fprintf(stderr, "[wasp] ERROR no profile was written to %s: %s never loaded libwasp.so "
                "(statically linked, or it clears LD_PRELOAD/JAVA_TOOL_OPTIONS) — run a "
                "dynamically linked program\n", a.dir, a.command[0]);
    return rc;
}

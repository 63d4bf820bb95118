/*
 * attach.c - `wasp attach PID [options]` and `wasp attach PID --stop`.
 *
 * Checks the options and the machine as `wasp run` does, then loads
 * libwasp.so into the running JVM through its attach socket
 * (attach_socket.c) with the options, the run's length and its directory
 * (DIR/<pid>, one per attach: a second attach needs a new DIR, which the
 * default gives). The agent side is src/jvm/onattach.c; what its return
 * codes mean is attach_codes.h. Unless --no-wait, waits for the run to end
 * (^C ends it early) and says where the profile is.
 */
#include "attach.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "attach_codes.h"
#include "attach_socket.h"
#include "options.h"
#include "publish.h"
#include "run.h"
#include "run_check.h"
#include "run_dir.h"

#define ATTACH_USAGE "usage: wasp attach PID [--duration T] [--mode dead-store|silent-store|silent-load] " \
                     "[--interval T] [--sampler auto|pmu|software|ctimer] [--period N] [--slots 1-4] " \
                     "[--fp-tolerance F] [--stack include|exclude] [--no-watch-check] [--no-wait] [-o DIR]\n" \
                     "       wasp attach PID --stop"
#define WAKE_TIMEOUT_MS 10000
/* How long past its duration a run may take to write its profiles. */
#define WRITE_GRACE_MS 60000

typedef struct attach_args {
    pid_t pid;
    char options[OPTIONS_MAX_TEXT];
    char dir[PATH_MAX];       /* as the JVM sees it; "" for the default */
    uint64_t duration_ns;
    int stop, no_wait, no_watch_check;
} attach_args;

static int usage_error(const char *fmt, const char *what)
{
    fprintf(stderr, "[wasp] ERROR ");
    fprintf(stderr, fmt, what);
    fprintf(stderr, "\n%s\n", ATTACH_USAGE);
    return 2;
}

static int parse_pid(const char *text, pid_t *pid)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (!*text || *end || v <= 0 || v > INT_MAX)
        return -1;
    *pid = (pid_t)v;
    return 0;
}

static int parse_flag(attach_args *a, const char *flag, const char *value)
{
    if (strcmp(flag, "--duration") == 0) {
        if (options_parse_run_length(value, &a->duration_ns) < 0)
            return usage_error("bad --duration '%s' — give how long to profile, 1ms to 7d, e.g. 30s or 5m", value);
        return 0;
    }
    const char *key = run_flag_key(flag);
    if (!key)
        return usage_error("unknown option '%s'", flag);
    if (strcmp(key, "dir") == 0) {
        if (!*value || snprintf(a->dir, sizeof(a->dir), "%s", value) >= (int)sizeof(a->dir))
            return usage_error("bad -o '%s' — give a directory, e.g. -o prof", value);
        return 0;
    }
    return run_append_option(a->options, sizeof(a->options), key, value) < 0
               ? usage_error("option '%s' is too long", flag) : 0;
}

static int parse_args(int argc, char **argv, attach_args *a)
{
    int have_pid = 0;
    memset(a, 0, sizeof(*a));
    a->duration_ns = 30000000000ULL;
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i];
        if (!strcmp(flag, "--stop")) { a->stop = 1; continue; }
        if (!strcmp(flag, "--no-wait")) { a->no_wait = 1; continue; }
        if (!strcmp(flag, "--no-watch-check")) { a->no_watch_check = 1; continue; }
        if (flag[0] != '-') {
            if (have_pid++ || parse_pid(flag, &a->pid) < 0)
                return usage_error("'%s' is not a process id — give the pid of a running JVM (see `jps`)", flag);
            continue;
        }
        char name[64];
        const char *value = strchr(flag, '=');
        if (value && (size_t)(value - flag) < sizeof(name)) {
            snprintf(name, sizeof(name), "%.*s", (int)(value - flag), flag);
            flag = name;
            value++;
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            return usage_error("option '%s' needs a value", flag);
        }
        if (parse_flag(a, flag, value))
            return 2;
    }
    if (!have_pid)
        return usage_error("%s", "no process id given — write: wasp attach PID");
    return 0;
}

typedef struct load_call {
    const attach_target *t;
    const char *lib, *options;
    int agent_rc;
    char err[512];
} load_call;

static int do_load(void *arg)
{
    load_call *c = arg;
    return attach_load(c->t, c->lib, c->options, WAKE_TIMEOUT_MS, &c->agent_rc, c->err, sizeof(c->err));
}

/* Loads the agent with options; Agent_OnAttach's code, or -1 (printed). */
static int load_agent(const attach_target *t, const char *lib, const char *options)
{
    load_call c = { .t = t, .lib = lib, .options = options };
    if (attach_as_target(t, do_load, &c, c.err, sizeof(c.err)) < 0) {
        fprintf(stderr, "[wasp] ERROR %s\n", c.err);
        return -1;
    }
    return c.agent_rc;
}

/* One line for a code Agent_OnAttach returned; 0 for AGENT_OK. */
static int agent_error(int rc, pid_t pid)
{
    const char *why;
    switch (rc) {
    case AGENT_OK: return 0;
    case AGENT_RUN_ACTIVE: why = "an earlier `wasp attach` run is still active in it — wait for it to end, "
                                 "or end it with: wasp attach PID --stop"; break;
    case AGENT_NO_RUN: why = "no `wasp attach` run is active in it — nothing to stop"; break;
    case AGENT_NATIVE: why = "it is profiled already, since its start (wasp run, -agentpath or LD_PRELOAD) — "
                             "read that run's profile instead"; break;
    case AGENT_BAD_OPTIONS: why = "the agent refused the options — check them with wasp run's option list"; break;
    case AGENT_NO_THREADS: why = "its thread structures are not the HotSpot layout wasp knows (JDK 17 to 25) — "
                                 "profile it from the start with wasp run"; break;
    case AGENT_START_FAILED: why = "the agent could not start — the JVM's stderr has its [wasp] ERROR line "
                                   "naming the cause"; break;
    default: why = "unknown return code from the agent — is this wasp's libwasp.so?"; break;
    }
    fprintf(stderr, "[wasp] ERROR JVM %d: %s (code %d)\n", (int)pid, why, rc);
    return -1;
}

/* A JVM in another mount namespace cannot see our library: a copy goes
 * into its /tmp, made as its user, under a temporary name renamed into
 * place, so an earlier copy the JVM has mapped is never rewritten. */
static int copy_file(const char *from, const char *to)
{
    char buf[65536], tmp[PATH_MAX + 96];
    int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, rc = -1;
    ssize_t n;
    snprintf(tmp, sizeof(tmp), "%s.%d", to, (int)getpid());
    if (in >= 0)
        out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    while (out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
        if (write(out, buf, (size_t)n) != n)
            goto done;
    rc = out >= 0 ? 0 : -1;
done:
    if (in >= 0) close(in);
    if (out >= 0 && close(out) != 0) rc = -1;
    if (rc == 0 && rename(tmp, to) != 0) rc = -1;
    if (rc != 0 && out >= 0) unlink(tmp);
    return rc;
}

typedef struct prepare_call {
    const attach_target *t;
    attach_args *a;
    char lib[PATH_MAX];       /* in the JVM's view */
    char view_dir[PATH_MAX + 64];  /* DIR in ours */
    char err[PATH_MAX + 256];
} prepare_call;

/* As the JVM's user: the library where it can load it, DIR created. */
static int prepare(void *arg)
{
    prepare_call *c = arg;
    char own[PATH_MAX];
    if (c->t->other_root) {
        snprintf(own, sizeof(own), "%s", c->lib);
        snprintf(c->lib, sizeof(c->lib), "/tmp/libwasp-attach-%u.so", (unsigned)c->t->uid);
        snprintf(c->view_dir, sizeof(c->view_dir), "%s%s", c->t->root, c->lib);
        if (copy_file(own, c->view_dir) < 0) {
            snprintf(c->err, sizeof(c->err), "cannot copy libwasp.so into the JVM's /tmp (%s): %s",
                     c->view_dir, strerror(errno));
            return -1;
        }
    }
    snprintf(c->view_dir, sizeof(c->view_dir), "%s%s", c->t->other_root ? c->t->root : "", c->a->dir);
    return run_dir_check(c->view_dir, c->err, sizeof(c->err));
}

/* The default DIR: wasp-attach-PID-N, the first N not taken, in our
 * working directory, or the JVM's /tmp when its file system is not ours. */
static int default_dir(attach_args *a, const attach_target *t)
{
    char cwd[PATH_MAX - 64];
    struct stat st;
    if (!t->other_root && !getcwd(cwd, sizeof(cwd)))
        return -1;
    for (int n = 1; n < 10000; n++) {
        char view[PATH_MAX + 128];
        snprintf(a->dir, sizeof(a->dir), "%s/wasp-attach-%d-%d", t->other_root ? "/tmp" : cwd, (int)a->pid, n);
        snprintf(view, sizeof(view), "%s%s", t->other_root ? t->root : "", a->dir);
        if (lstat(view, &st) != 0)
            return 0;
    }
    return -1;
}

static int absolute(char *dir, size_t len)
{
    char cwd[PATH_MAX], tmp[PATH_MAX];
    if (dir[0] == '/')
        return 0;
    if (!getcwd(cwd, sizeof(cwd)) || snprintf(tmp, sizeof(tmp), "%s/%s", cwd, dir) >= (int)sizeof(tmp) ||
        strlen(tmp) >= len)
        return -1;
    memcpy(dir, tmp, strlen(tmp) + 1);
    return 0;
}

static double ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* Whether DIR/<pid>/manifest records the run's end ("exit"). */
static int run_ended(const char *pid_dir)
{
    char path[PATH_MAX + 32], line[128];
    int ended = 0;
    snprintf(path, sizeof(path), "%s/manifest", pid_dir);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    while (!ended && fgets(line, sizeof(line), f))
        ended = strcmp(line, "exit\n") == 0;
    fclose(f);
    return ended;
}

/* Until the run ends (^C ends it now), the JVM exits or time runs out. */
static void wait_for_run(const attach_target *t, const attach_args *a, const char *lib, const char *pid_dir)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    double limit = (double)a->duration_ns / 1e6 + WRITE_GRACE_MS;
    int stopping = 0;
    signal(SIGINT, on_interrupt);
    signal(SIGTERM, on_interrupt);
    while (!run_ended(pid_dir) && kill(t->pid, 0) == 0 && ms_since(&t0) < limit) {
        if (interrupted && !stopping++) {
            fprintf(stderr, "[wasp] ending the run now\n");
            agent_error(load_agent(t, lib, "stop"), t->pid);
        }
        struct timespec pause = { 0, 50 * 1000000L };
        nanosleep(&pause, NULL);
    }
}

static int stop_main(const attach_target *t, const char *lib)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (agent_error(load_agent(t, lib, "stop"), t->pid) < 0)
        return 1;
    fprintf(stderr, "[wasp] ended the attached run in JVM %d in %.0f ms: its profiles are written\n",
            (int)t->pid, ms_since(&t0));
    return 0;
}

static int start_main(attach_args *a, const wasp_options *o, const attach_target *t, const char *lib)
{
    char duration[32];
    if (run_check_machine(o, a->no_watch_check, a->options, sizeof(a->options)) < 0)
        return 2;
    if (a->dir[0] && t->other_root && a->dir[0] != '/') {
        fprintf(stderr, "[wasp] ERROR JVM %d has a file system of its own (a container): give -o as an "
                "absolute path in it, e.g. -o /tmp/prof\n", (int)t->pid);
        return 2;
    }
    if (a->dir[0] ? (!t->other_root && absolute(a->dir, sizeof(a->dir)) < 0) : default_dir(a, t) < 0) {
        fprintf(stderr, "[wasp] ERROR output directory path too long — give a shorter -o DIR\n");
        return 2;
    }
    prepare_call c = { .t = t, .a = a };
    snprintf(c.lib, sizeof(c.lib), "%s", lib);
    if (attach_as_target(t, prepare, &c, c.err, sizeof(c.err)) < 0) {
        fprintf(stderr, "[wasp] ERROR %s\n", c.err);
        return 2;
    }
    snprintf(duration, sizeof(duration), "%lluns", (unsigned long long)a->duration_ns);
    if (run_append_option(a->options, sizeof(a->options), "dir", a->dir) < 0 ||
        run_append_option(a->options, sizeof(a->options), "duration", duration) < 0)
        return usage_error("%s", "options too long");
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (agent_error(load_agent(t, c.lib, a->options), t->pid) < 0)
        return 1;
    char pid_dir[PATH_MAX + 96];
    snprintf(pid_dir, sizeof(pid_dir), "%s/%d", c.view_dir, (int)t->nspid);
    fprintf(stderr, "[wasp] attached to JVM %d in %.0f ms: profiling it for %.3gs into %s\n", (int)t->pid,
            ms_since(&t0), (double)a->duration_ns / 1e9, c.view_dir);
    /* HotSpot records a compiled instruction's line at safepoints only,
     * unless DebugNonSafepoints is on (a JVMTI agent loaded at the start
     * turns it on, one loaded now only for what is compiled from now on):
     * a store in a C2 loop body then reads as its loop's header line. */
    if (t->coarse_lines)
        fprintf(stderr, "[wasp] INFO no -XX:+DebugNonSafepoints in JVM %d's options: code it compiled before "
                "this attach knows its source lines at safepoints only, so a line there may name its loop's "
                "header — for exact lines, start the JVM with -XX:+UnlockDiagnosticVMOptions "
                "-XX:+DebugNonSafepoints (or with wasp run)\n", (int)t->pid);
    if (a->no_wait) {
        fprintf(stderr, "[wasp] when it ends, view it with: wasp report %s (end it early: wasp attach %d "
                "--stop)\n", c.view_dir, (int)a->pid);
        return 0;
    }
    wait_for_run(t, a, c.lib, pid_dir);
    if (!run_ended(pid_dir)) {
        fprintf(stderr, "[wasp] ERROR the run in JVM %d did not end%s — see the JVM's stderr\n", (int)t->pid,
                kill(t->pid, 0) == 0 ? " in time" : ": the JVM is gone");
        return 1;
    }
    run_check_outcome(c.view_dir, 0, 0, "the JVM");
    return 0;
}

int attach_main(int argc, char **argv)
{
    attach_args a;
    attach_target t;
    wasp_options o;
    char err[512], lib[PATH_MAX];
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    options_defaults(&o);
    if (options_parse(a.options, &o, err, sizeof(err)) < 0)
        return usage_error("%s", err);
    if (attach_target_find(a.pid, &t, err, sizeof(err)) < 0) {
        fprintf(stderr, "[wasp] ERROR %s\n", err);
        return 1;
    }
    if (run_find_library(lib, sizeof(lib)) < 0)
        return 2;
    return a.stop ? stop_main(&t, lib) : start_main(&a, &o, &t, lib);
}

/*
 * run_exact.c - `wasp run --exact [...] -- CMD`.
 *
 * Starts CMD under Valgrind with wasp's tool (build/lib/valgrind/
 * wasp-amd64-linux, next to links to Valgrind's own files: VALGRIND_LIB
 * must name one folder holding both) following every exec'd child, then
 * converts each process's raw file (DIR/.exact/<pid>.raw) into standard
 * profiles (exact_convert.c). Refuses what it cannot do before starting
 * anything: a bad --exact-limit, a missing valgrind, a program built with a
 * sanitizer that cannot run under Valgrind (run_check.c).
 *
 * Any process may be a JVM (a "java" the command is or starts): every run
 * gets Valgrind's check of generated code (a JIT writes code into memory
 * that is no file; native code lives in files, so it costs them nothing),
 * and, through JAVA_TOOL_OPTIONS, libwasp.so as a maps-only agent
 * (exactmaps.c: Java threads, code maps, names) and
 * -XX:+PreserveFramePointer, so that the tool reads Java frames off the
 * frame-pointer chain (exact_java.c).
 */
#include "run_exact.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "exact_convert.h"
#include "run.h"
#include "publish.h"
#include "run_check.h"
#include "run_dir.h"
#include "run_env.h"

#define EXACT_MAX_ARGS 16

static int exact_error(const char *what, const char *fix)
{
    fprintf(stderr, "[wasp] ERROR %s — %s\n", what, fix);
    return 2;
}

/* "--wasp-limit-insns=N" or "--wasp-limit-ms=N" from "500m", "2000000", "30s", "1500ms". */
static int limit_option(const char *limit, char *out, size_t len)
{
    uint64_t n;
    size_t l = strlen(limit);
    if (l && limit[l - 1] == 's') {
        if (options_parse_duration(limit, &n) < 0 || n < 1000000)
            return -1;
        snprintf(out, len, "--wasp-limit-ms=%llu", (unsigned long long)(n / 1000000));
        return 0;
    }
    if (options_parse_count(limit, &n) < 0 || n == 0)
        return -1;
    snprintf(out, len, "--wasp-limit-insns=%llu", (unsigned long long)n);
    return 0;
}

/* build/lib/valgrind/ relative to the wasp binary (bin/../lib/valgrind). */
static int tool_dir(char *out, size_t len)
{
    char exe[PATH_MAX], tool[PATH_MAX + 64];
    struct stat st;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    if ((size_t)snprintf(out, len, "%s/../lib/valgrind", exe) >= len)
        return -1;
    snprintf(tool, sizeof(tool), "%s/wasp-amd64-linux", out);
    return stat(tool, &st) == 0 ? 0 : -1;
}

static int on_path(const char *name)
{
    const char *dirs = getenv("PATH");
    char path[PATH_MAX];
    for (; dirs && *dirs;) {
        size_t n = strcspn(dirs, ":");
        if (n && (size_t)snprintf(path, sizeof(path), "%.*s/%s", (int)n, dirs, name) < sizeof(path) &&
            access(path, X_OK) == 0)
            return 1;
        dirs += n + (dirs[n] == ':');
    }
    return 0;
}

/* JAVA_TOOL_OPTIONS for a JVM: the maps-only agent, frame pointers kept. */
static int java_env(const char *libdir)
{
    char lib[PATH_MAX + 32], real[PATH_MAX], opts[8192], err[512];
    const char *old = getenv("JAVA_TOOL_OPTIONS");
    snprintf(lib, sizeof(lib), "%s/../libwasp.so", libdir);
    if (!realpath(lib, real)) {
        exact_error("cannot find libwasp.so next to the wasp binary", "run `make`");
        return -1;
    }
    if (snprintf(opts, sizeof(opts), "-XX:+PreserveFramePointer%s%s", old && *old ? " " : "",
                 old ? old : "") >= (int)sizeof(opts) ||
        setenv("JAVA_TOOL_OPTIONS", opts, 1) != 0) {
        exact_error("JAVA_TOOL_OPTIONS would be too long", "shorten it");
        return -1;
    }
    if (run_env_java_agent(real, "exact-maps", err, sizeof(err)) < 0) {
        fprintf(stderr, "[wasp] ERROR %s\n", err);
        return -1;
    }
    return 0;
}

/* DIR as the sampled mode makes it (run_dir.c), and in it the folder of
 * the tool's raw records, new: an earlier run's would be converted too. */
static int make_dirs(const char *dir, char *raw, size_t len)
{
    char err[PATH_MAX + 256];
    if (run_dir_check(dir, err, sizeof(err)) < 0) {
        fprintf(stderr, "[wasp] ERROR %s\n", err);
        return -1;
    }
    if ((size_t)snprintf(raw, len, "%s/.exact", dir) >= len) {
        exact_error("output directory path too long", "give a shorter -o DIR");
        return -1;
    }
    if (mkdir(raw, PUBLISH_DIR_MODE) != 0) {
        exact_error("cannot create the run directory's .exact folder", strerror(errno));
        return -1;
    }
    return 0;
}

/* valgrind's argument vector, CMD's after it; static strings live in opt. */
static char **tool_argv(const wasp_options *o, const char *dir, char **command, const char *limit_opt,
                        char opt[][PATH_MAX + 32])
{
    size_t n = 0, ncmd = 0;
    while (command[ncmd])
        ncmd++;
    char **argv = calloc(EXACT_MAX_ARGS + ncmd + 1, sizeof(char *));
    if (!argv)
        return NULL;
    argv[n++] = "valgrind";
    argv[n++] = "-q";
    argv[n++] = "--tool=wasp";
    argv[n++] = "--trace-children=yes";
    /* Name the frames below main as the sampled mode does (not "(below main)"). */
    argv[n++] = "--show-below-main=yes";
    /* Inlined callees named as the sampled mode names them (not the default for new tools). */
    argv[n++] = "--read-inline-info=yes";
    /* Frames are named at the end: keep the names of libraries unloaded before. */
    argv[n++] = "--keep-debuginfo=yes";
    snprintf(opt[0], sizeof(opt[0]), "--wasp-dir=%s", dir);
    snprintf(opt[1], sizeof(opt[1]), "--wasp-mode=%s", options_mode_name(o->mode));
    snprintf(opt[2], sizeof(opt[2]), "--wasp-fp-tolerance=%.17g", o->fp_tolerance);
    /* auto: the tool decides per process (native or JVM), as the sampled mode. */
    snprintf(opt[3], sizeof(opt[3]), "--wasp-stack=%s",
             o->stack == STACK_EXCLUDE ? "exclude" : o->stack == STACK_INCLUDE ? "include" : "auto");
    for (int i = 0; i < 4; i++)
        argv[n++] = opt[i];
    argv[n++] = "--smc-check=all-non-file";
    /* Threads take Valgrind's lock in turn: a busy thread otherwise starves
     * the JVM's service thread (code maps arrive late) and the agent's
     * poller (an --exact-limit cut waits for it). */
    argv[n++] = "--fair-sched=try";
    if (limit_opt)
        argv[n++] = (char *)limit_opt;
    for (size_t i = 0; i < ncmd; i++)
        argv[n++] = command[i];
    return argv;
}

static int start_and_wait(char **argv, const char *libdir)
{
    if (setenv("VALGRIND_LIB", libdir, 1) != 0)
        return exact_error("cannot set VALGRIND_LIB", "check the environment's size");
    pid_t child = fork();
    if (child < 0)
        return exact_error("cannot fork", strerror(errno));
    if (child == 0) {
        execvp(argv[0], argv);
        fprintf(stderr, "[wasp] ERROR cannot run valgrind: %s — install the Debian package valgrind\n",
                strerror(errno));
        _exit(127);
    }
    return run_wait(child);
}

int run_exact(const wasp_options *o, const char *dir, char **command, const char *limit)
{
    char libdir[PATH_MAX], raw[PATH_MAX], limit_opt[64], err[1024];
    char opt[4][PATH_MAX + 32];
    if (limit && limit_option(limit, limit_opt, sizeof(limit_opt)) < 0)
        return exact_error("--exact-limit must be a count of instructions (2000000, 500m) or a time (30s, 1500ms)",
                           "write it like that");
    if (tool_dir(libdir, sizeof(libdir)) < 0)
        return exact_error("cannot find wasp's Valgrind tool (lib/valgrind/wasp-amd64-linux) next to the wasp binary",
                           "run `make`");
    if (java_env(libdir) < 0)
        return 2;
    if (!on_path("valgrind"))
        return exact_error("valgrind is not installed", "install the Debian package valgrind (apt-get install valgrind)");
    const run_sanitizer *san = run_check_sanitizer(command[0]);
    if (san) {
        fprintf(stderr, "[wasp] ERROR %s is built with %s: %s (the exact mode's engine) — profile it "
                "sampled (wasp run without --exact) or build it without -fsanitize\n",
                command[0], san->name, san->why);
        return 2;
    }
    if (make_dirs(dir, raw, sizeof(raw)) < 0)
        return 2;
    char **argv = tool_argv(o, dir, command, limit ? limit_opt : NULL, opt);
    if (!argv)
        return exact_error("out of memory", "free some memory");
    int rc = start_and_wait(argv, libdir);
    free(argv);
    exact_summary s;
    if (exact_convert_dir(dir, &s, err, sizeof(err)) < 0) {
        fprintf(stderr, "[wasp] ERROR %s\n", err);
        return rc ? rc : 2;
    }
    if (s.cut)
        fprintf(stderr, "[wasp] INFO --exact-limit %s stopped the program after %llu instructions: "
                "the profile covers the run up to there\n", limit, (unsigned long long)s.instructions);
    if (s.profiles)
        fprintf(stderr, "[wasp] profile in %s — view it with: wasp report %s\n", dir, dir);
    else if (rc != 2)
        fprintf(stderr, "[wasp] ERROR no profile was written to %s: the program did not run under "
                "Valgrind to its end — see Valgrind's message above\n", dir);
    return rc;
}

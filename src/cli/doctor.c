/*
 * doctor.c - `wasp doctor`: the kernel, the perf settings, the PMUs and the
 * memory events wasp would sample with, how many watchpoints a thread really
 * gets (by opening them), the sampler `auto` picks and why, the JDKs on the
 * machine and whether the signals wasp uses are free.
 *
 * Everything is measured on the calling thread and undone before returning.
 * Normal context; the CLI only.
 */
#include "doctor.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "access.h"
#include "options.h"
#include "perf.h"
#include "pmu_events.h"
#include "sampler.h"
#include "sampler_pmu.h"
#include "signal_cost.h"
#include "switch_cost.h"
#include "watch_check.h"

#define DOCTOR_JVM_ROOT "/usr/lib/jvm"
#define DOCTOR_MAX_BREAKPOINTS 5   /* one more than x86 has, to see the limit */

typedef struct doctor_state {
    int slots;              /* breakpoints one thread could open, at most 4 used */
    watch_check watch;      /* whether those slots also fire */
    int task_clock_ok;
    uint64_t tick_ns;           /* the CPU-time timer fires on it; 0: it did not fire */
    int pmu_ok[2];          /* [0] stores, [1] loads */
    pmu_event pmu_ev[2];
    char bp_err[512], clock_err[512], pmu_why[2][512];
} doctor_state;

static void doctor_line(FILE *out, const char *label, const char *fmt, ...)
{
    va_list ap;
    fprintf(out, "  %-20s ", label);
    va_start(ap, fmt);
    vfprintf(out, fmt, ap);
    va_end(ap);
    fputc('\n', out);
}

/* The first "key : value" line of a /proc file whose key is `key`. */
static int doctor_proc_field(const char *path, const char *key, char *val, size_t len)
{
    char buf[512];
    size_t klen = strlen(key);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    while (fgets(buf, sizeof(buf), f)) {
        if (strncmp(buf, key, klen) != 0 || (buf[klen] != ':' && buf[klen] != '\t' && buf[klen] != ' '))
            continue;
        char *v = strchr(buf, ':');
        if (!v)
            continue;
        for (v++; *v == ' ' || *v == '\t'; v++)
            ;
        v[strcspn(v, "\n")] = '\0';
        snprintf(val, len, "%s", v);
        fclose(f);
        return 0;
    }
    fclose(f);
    return -1;
}

static void doctor_kernel(FILE *out)
{
    struct utsname u;
    char model[256] = "unknown", vendor[64] = "unknown vendor";
    if (uname(&u) == 0)
        doctor_line(out, "kernel", "%s %s (%s)", u.sysname, u.release, u.machine);
    doctor_proc_field("/proc/cpuinfo", "model name", model, sizeof(model));
    doctor_proc_field("/proc/cpuinfo", "vendor_id", vendor, sizeof(vendor));
    doctor_line(out, "cpu", "%s (%s)", model, vendor);
}

static void doctor_paranoid(FILE *out)
{
    int p = pmu_read_paranoid();
    const char *root = geteuid() == 0 ? "; running as root, so it does not limit wasp" : "";
    if (p < -1)
        doctor_line(out, "perf_event_paranoid", "unreadable (no /proc/sys/kernel/perf_event_paranoid)");
    else if (p <= 2)
        doctor_line(out, "perf_event_paranoid", "%d: users may profile their own threads (wasp needs <= 2)%s",
                    p, root);
    else
        doctor_line(out, "perf_event_paranoid", "%d: perf_event_open is closed to unprivileged users%s%s", p,
                    root, *root ? "" : " — run as root or set /proc/sys/kernel/perf_event_paranoid to 2");
}

static void doctor_event_text(const pmu_event *ev, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s (type %u, config 0x%llx", ev->name, ev->type, (unsigned long long)ev->config);
    if (n > 0 && (size_t)n < len && ev->config1)
        n += snprintf(buf + n, len - (size_t)n, ", config1 0x%llx", (unsigned long long)ev->config1);
    if (n > 0 && (size_t)n < len && ev->config2)
        n += snprintf(buf + n, len - (size_t)n, ", config2 0x%llx", (unsigned long long)ev->config2);
    if (n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, ", precise_ip %d)", ev->precise_ip);
}

/* Every candidate event for stores and loads, and whether it opens here. */
static void doctor_events(FILE *out, const char *root)
{
    static const uint8_t wants[2] = { ACCESS_STORE, ACCESS_LOAD };
    static const char *const labels[2] = { "store events", "load events" };
    char list[512], text[256], why[512];
    pmu_event cands[2][PMU_MAX_CANDIDATES];
    int count[2];

    if (pmu_events_list(root, list, sizeof(list)) < 0)
        snprintf(list, sizeof(list), "none (cannot read the directory)");
    doctor_line(out, "PMUs", "%s (in %s)", list, root);
    for (int k = 0; k < 2; k++)
        count[k] = pmu_events_select(root, wants[k], cands[k], PMU_MAX_CANDIDATES, NULL, 0);
    if (count[0] == 0 && count[1] == 0) {
        doctor_line(out, "memory events", "none (no PMU with precise memory sampling: see sampler)");
        return;
    }
    for (int k = 0; k < 2; k++) {
        int n = count[k];
        if (n == 0) {
            doctor_line(out, labels[k], "none");
            continue;
        }
        for (int i = 0; i < n; i++) {
            doctor_event_text(&cands[k][i], text, sizeof(text));
            if (pmu_probe(&cands[k][i], OPTIONS_DEFAULT_PERIOD, why, sizeof(why)) == 0)
                doctor_line(out, i ? "" : labels[k], "%s: opens", text);
            else
                doctor_line(out, i ? "" : labels[k], "%s: fails: %s", text, why);
        }
    }
}

static void doctor_breakpoints(FILE *out, const char *root, doctor_state *d)
{
    struct perf_event_attr attr[DOCTOR_MAX_BREAKPOINTS];
    int fds[DOCTOR_MAX_BREAKPOINTS], n = 0, err = 0;
    long type = -1;
    char buf[32], path[PATH_MAX];

    for (; n < DOCTOR_MAX_BREAKPOINTS; n++) {
        fds[n] = perf_open_breakpoint(0, 0, &attr[n]);
        if (fds[n] < 0) {
            err = errno;
            break;
        }
    }
    for (int i = 0; i < n; i++)
        close(fds[i]);
    d->slots = n < OPTIONS_MAX_SLOTS ? n : OPTIONS_MAX_SLOTS;
    snprintf(path, sizeof(path), "%s/breakpoint/type", root);
    FILE *f = fopen(path, "r");
    if (f) {
        if (fgets(buf, sizeof(buf), f))
            type = strtol(buf, NULL, 10);
        fclose(f);
    }
    if (type >= 0)
        snprintf(buf, sizeof(buf), "type %ld", type);
    else
        snprintf(buf, sizeof(buf), "not listed in sysfs");
    if (n == 0) {
        perf_probe(1, d->bp_err, sizeof(d->bp_err));
        doctor_line(out, "breakpoints", "breakpoint PMU %s; none opens: %s", buf, d->bp_err);
    } else if (n == DOCTOR_MAX_BREAKPOINTS) {
        doctor_line(out, "breakpoints", "breakpoint PMU %s; %d open per thread, wasp uses %d watch slots",
                    buf, n, d->slots);
    } else {
        doctor_line(out, "breakpoints", "breakpoint PMU %s; %d watch slot%s per thread (breakpoint %d: %s)",
                    buf, n, n == 1 ? "" : "s", n + 1, strerror(err));
    }
}

/* Opening is not firing: some hypervisors give out slots whose debug
 * registers never trap. Only the self-test's trap counts. */
static void doctor_watch(FILE *out, doctor_state *d)
{
    char what[512];
    if (d->slots == 0)
        return;
    watch_check_run(d->slots, &d->watch);
    watch_check_describe(&d->watch, what, sizeof(what));
    doctor_line(out, "watch self-test", "%s", what);
}

static void doctor_task_clock(FILE *out, doctor_state *d)
{
    int fd = perf_open_sampler(0, 10000000, 0);
    d->task_clock_ok = fd >= 0;
    if (fd >= 0) {
        close(fd);
        doctor_line(out, "task clock", "opens (the software sampler works)");
        return;
    }
    perf_probe(0, d->clock_err, sizeof(d->clock_err));
    doctor_line(out, "task clock", "fails: %s", d->clock_err);
}

/* The ctimer sampler's clock (sampler_ctimer.c): whether a CPU-time timer
 * fires here, and on what tick. */
static void doctor_cpu_timer(FILE *out, doctor_state *d)
{
    d->tick_ns = ctimer_tick_ns();
    if (d->tick_ns)
        doctor_line(out, "cpu timer", "fires every %.1f ms of CPU (the kernel's tick): auto's software "
                    "sampler from %.0f ms intervals up", (double)d->tick_ns / 1e6,
                    (double)CTIMER_MIN_INTERVAL_NS / 1e6);
    else
        doctor_line(out, "cpu timer", "did not fire within 50 ms of CPU: the task clock samples at "
                    "every interval (--sampler software)");
}

/* What sampling costs a thread here, as `wasp run` measures it at start
 * (signal_cost.h, switch_cost.h) at the default interval, with the sampler
 * auto takes there: every profile charges it, so a user can see before a
 * run what a sample and a context switch will cost. */
static void doctor_costs(FILE *out, const doctor_state *d)
{
    switch_cost c, clock;
    uint64_t signal = d->task_clock_ok ? signal_cost_ns() : 0;
    uint64_t period = d->tick_ns ? 0 : OPTIONS_DEFAULT_INTERVAL_NS;   /* the ctimer has no part */
    if (!signal || d->slots == 0 || switch_cost_measure(d->slots, period, &c) < 0 ||
        switch_cost_measure(d->slots, OPTIONS_DEFAULT_INTERVAL_NS, &clock) < 0) {
        doctor_line(out, "costs", "not measured: no task clock or no breakpoint opens");
        return;
    }
    doctor_line(out, "costs", "a sample's signal %.1f \xc2\xb5s of CPU; each context switch of a sampled "
                "thread +%.2f \xc2\xb5s", (double)signal / 1e3, (double)c.base_ns / 1e3);
    doctor_line(out, "", "at a %.0f ms interval with the %s, +%.2f \xc2\xb5s per armed watch "
                "(with the task clock: +%.2f \xc2\xb5s)", (double)OPTIONS_DEFAULT_INTERVAL_NS / 1e6,
                d->tick_ns ? "CPU timer" : "task clock", (double)c.armed_ns / 1e3, (double)clock.base_ns / 1e3);
}

/* What sampler_select would do for `auto`, for store modes and for silent-load. */
static void doctor_auto(FILE *out, const char *root, doctor_state *d)
{
    static const uint8_t wants[2] = { ACCESS_STORE, ACCESS_LOAD };
    static const char *const modes[2] = { "dead-store, silent-store", "silent-load" };
    for (int k = 0; k < 2; k++)
        d->pmu_ok[k] = pmu_choose(root, wants[k], OPTIONS_DEFAULT_PERIOD, &d->pmu_ev[k], d->pmu_why[k],
                                  sizeof(d->pmu_why[k])) == 0;
    if (!d->pmu_ok[0] && !d->pmu_ok[1] && strcmp(d->pmu_why[0], d->pmu_why[1]) == 0) {
        doctor_line(out, "sampler (auto)", "software (%s), every mode: %s",
                    d->tick_ns ? "ctimer from 10 ms intervals, task clock below" : "task clock", d->pmu_why[0]);
        return;
    }
    for (int k = 0; k < 2; k++) {
        if (d->pmu_ok[k])
            doctor_line(out, k ? "" : "sampler (auto)", "%s: pmu, %s every %llu events", modes[k],
                        d->pmu_ev[k].name, (unsigned long long)OPTIONS_DEFAULT_PERIOD);
        else
            doctor_line(out, k ? "" : "sampler (auto)", "%s: software: %s", modes[k], d->pmu_why[k]);
    }
}

static int doctor_compare(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* JAVA_VERSION="17.0.15" from a JDK's release file. */
static void doctor_java_version(const char *jdk, char *version, size_t len)
{
    char path[PATH_MAX + 16], line[256];
    FILE *f;
    snprintf(version, len, "version unknown");
    snprintf(path, sizeof(path), "%s/release", jdk);
    if (!(f = fopen(path, "r")))
        return;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "JAVA_VERSION=", 13) != 0)
            continue;
        char *v = line + 13 + (line[13] == '"');
        v[strcspn(v, "\"\n")] = '\0';
        snprintf(version, len, "%s", v);
        break;
    }
    fclose(f);
}

/* <jvm_root>/<name>/bin/java, one line per JDK; aliases (symlinks to a JDK
 * already shown) once. */
static void doctor_jdks(FILE *out, const char *jvm_root)
{
    enum { MAX_JDKS = 32 };
    char *names[MAX_JDKS], seen[MAX_JDKS][PATH_MAX], jdk[PATH_MAX], java[PATH_MAX + 16], version[64];
    int n = 0, nseen = 0;
    DIR *dir = opendir(jvm_root);
    struct dirent *e;

    while (dir && (e = readdir(dir)) != NULL && n < MAX_JDKS)
        if (e->d_name[0] != '.' && (names[n] = strdup(e->d_name)) != NULL)
            n++;
    if (dir)
        closedir(dir);
    qsort(names, (size_t)n, sizeof(names[0]), doctor_compare);
    for (int i = 0; i < 2 * n; i++) {
        struct stat st;
        int dup = 0;
        snprintf(jdk, sizeof(jdk), "%s/%s", jvm_root, names[i % n]);
        snprintf(java, sizeof(java), "%s/bin/java", jdk);
        /* Real directories first, so an alias names the JDK only when its
         * target is not listed itself. */
        if (lstat(jdk, &st) != 0 || S_ISLNK(st.st_mode) != (i >= n))
            continue;
        if (access(java, X_OK) != 0 || !realpath(java, seen[nseen]))
            continue;
        for (int j = 0; j < nseen; j++)
            dup |= strcmp(seen[j], seen[nseen]) == 0;
        if (dup)
            continue;
        doctor_java_version(jdk, version, sizeof(version));
        doctor_line(out, nseen++ ? "" : "JDKs", "%s (%s)", jdk, version);
    }
    if (!nseen)
        doctor_line(out, "JDKs", "none in %s (Java programs need a JDK 17 or later)", jvm_root);
    for (int i = 0; i < n; i++)
        free(names[i]);
}

static void doctor_signals(FILE *out)
{
    struct sigaction sa;
    char tracer[32] = "0", seccomp[32] = "0";
    const char *state = "free";
    if (sigaction(SIGTRAP, NULL, &sa) == 0 && (sa.sa_flags & SA_SIGINFO ? sa.sa_sigaction != NULL :
                                               sa.sa_handler != SIG_DFL))
        state = "taken in this process (wasp chains to the previous handler)";
    doctor_line(out, "SIGTRAP", "%s; HotSpot (JDK 17, 25) installs no SIGTRAP handler", state);
    doctor_proc_field("/proc/self/status", "TracerPid", tracer, sizeof(tracer));
    if (strcmp(tracer, "0") != 0)
        doctor_line(out, "tracer", "pid %s is tracing wasp: a debugger may hold the debug registers", tracer);
    doctor_proc_field("/proc/self/status", "Seccomp", seccomp, sizeof(seccomp));
    doctor_line(out, "seccomp", "%s", strcmp(seccomp, "0") == 0 ? "off" :
                "on (a filter may refuse perf_event_open: the task clock and breakpoint lines say)");
}

static int doctor_verdict(FILE *out, const doctor_state *d, char *err, size_t errlen)
{
    char what[512];
    if (d->slots == 0) {
        snprintf(err, errlen, "no watchpoint opens: %s", d->bp_err);
    } else if (d->watch.verdict != WATCH_FIRES && d->watch.fired == 0) {
        watch_check_describe(&d->watch, what, sizeof(what));
        snprintf(err, errlen, "%s", what);
    } else if (!d->task_clock_ok && !d->pmu_ok[0]) {
        snprintf(err, errlen, "no sampler works: %s", d->clock_err);
    } else {
        const char *s = d->pmu_ok[0] ? "pmu" : "software";
        int fire = d->watch.fired;
        fprintf(out, "\nwasp can profile here: %s sampler, %d watch slot%s per thread that fire%s.\n", s,
                fire, fire == 1 ? "" : "s", fire == 1 ? "s" : "");
        return 0;
    }
    fprintf(out, "\nwasp cannot profile here: %s\n", err);
    return 1;
}

int doctor_report(FILE *out, const char *sysfs_root, const char *jvm_root, char *err, size_t errlen)
{
    doctor_state d;
    memset(&d, 0, sizeof(d));
    fprintf(out, "wasp doctor\n");
    doctor_kernel(out);
    doctor_paranoid(out);
    doctor_events(out, sysfs_root);
    doctor_breakpoints(out, sysfs_root, &d);
    doctor_watch(out, &d);
    doctor_task_clock(out, &d);
    doctor_cpu_timer(out, &d);
    doctor_costs(out, &d);
    doctor_auto(out, sysfs_root, &d);
    doctor_jdks(out, jvm_root);
    doctor_signals(out);
    return doctor_verdict(out, &d, err, errlen);
}

/* `wasp doctor --watch`: the self-test alone, for scripts (the test
 * suite asks it whether trap tests can run here). */
static int doctor_watch_only(void)
{
    watch_check c;
    char what[512];
    watch_check_run(OPTIONS_MAX_SLOTS, &c);
    watch_check_describe(&c, what, sizeof(what));
    printf("%s %s\n", watch_verdict_name(c.verdict), what);
    return c.verdict == WATCH_FIRES ? 0 : c.verdict == WATCH_CANNOT_OPEN ? 2 : 1;
}

int doctor_main(int argc, char **argv)
{
    char err[1200];
    if (argc == 2 && strcmp(argv[1], "--watch") == 0)
        return doctor_watch_only();
    if (argc > 1) {
        fprintf(stderr, "[wasp] ERROR unknown argument '%s' — wasp doctor takes none, or --watch\n"
                "usage: wasp doctor [--watch]\n", argv[1]);
        return 2;
    }
    if (doctor_report(stdout, PMU_SYSFS_ROOT, DOCTOR_JVM_ROOT, err, sizeof(err)) == 0)
        return 0;
    fflush(stdout);
    fprintf(stderr, "[wasp] ERROR wasp cannot profile here: %s\n", err);
    return 1;
}

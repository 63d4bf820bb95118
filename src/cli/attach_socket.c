/*
 * attach_socket.c - HotSpot's attach protocol (version 1) over its UNIX
 * socket, written from the JDK's documented behaviour.
 *
 * A JVM opens /tmp/.java_pid<PID> (its own /tmp and pid namespace) only
 * once asked: a file .attach_pid<PID> in its working directory (or /tmp)
 * owned by its user, then SIGQUIT. SIGQUIT to a JVM that does not catch it
 * (-Xrs, still starting) would kill it, and one started with
 * -XX:+DisableAttachMechanism would print a thread dump to its stdout
 * instead, so both are refused before any signal is sent. A request is
 * "1\0<command>\0<arg1>\0<arg2>\0<arg3>\0"; the answer is a status line
 * ("0" accepted) and, for load, the agent's return ("return code: N" on
 * JDK 17 and 25).
 */
#include "attach_socket.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* The whole file (bounded) into buf, NUL-terminated; its length or -1. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t n = 0;
    ssize_t r;
    while (n + 1 < len && (r = read(fd, buf + n, len - 1 - n)) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    return (ssize_t)n;
}

/* The value of "Key:" in /proc/PID/status text, or NULL. */
static const char *status_field(const char *status, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = status; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, key, kl) == 0 && p[kl] == ':')
            return p + kl + 1;
    return NULL;
}

static int parse_status(attach_target *t, char *err, size_t errlen)
{
    char path[64], status[8192];
    unsigned long long caught = 0;
    snprintf(path, sizeof(path), "/proc/%d/status", (int)t->pid);
    if (read_small(path, status, sizeof(status)) <= 0) {
        snprintf(err, errlen, "no process %d — give the pid of a running JVM (see `jps` or `pgrep java`)", (int)t->pid);
        return -1;
    }
    const char *uid = status_field(status, "Uid"), *gid = status_field(status, "Gid");
    const char *ns = status_field(status, "NSpid"), *sig = status_field(status, "SigCgt");
    unsigned ru, eu, rg, eg;
    if (!uid || !gid || sscanf(uid, "%u %u", &ru, &eu) != 2 || sscanf(gid, "%u %u", &rg, &eg) != 2 ||
        !sig || sscanf(sig, "%llx", &caught) != 1) {
        snprintf(err, errlen, "cannot read /proc/%d/status — is /proc mounted?", (int)t->pid);
        return -1;
    }
    t->uid = eu;
    t->gid = eg;
    t->nspid = t->pid;
    /* NSpid lists the pid in each nested namespace; the last is its own. */
    for (const char *p = ns; p && *p && *p != '\n';) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p)
            break;
        t->nspid = (pid_t)v;
        p = end;
    }
    if (!(caught & (1ULL << (SIGQUIT - 1)))) {
        snprintf(err, errlen, "process %d does not catch SIGQUIT, which starts a JVM's attach mechanism "
                 "(a JVM started with -Xrs, one still starting, or not a JVM) — attach to a JVM "
                 "running without -Xrs", (int)t->pid);
        return -1;
    }
    return 0;
}

static int maps_libjvm(pid_t pid)
{
    char path[64], line[4096];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    int found = 0;
    if (!f)
        return -1;
    while (!found && fgets(line, sizeof(line), f))
        found = strstr(line, "/libjvm.so") != NULL;
    fclose(f);
    return found;
}

/* Whether a file of NUL-separated strings (cmdline, environ) holds flag. */
static int mentions(const char *path, const char *flag)
{
    static char buf[1 << 20];
    ssize_t n = read_small(path, buf, sizeof(buf));
    for (ssize_t i = 0; i < n; i++)
        if (buf[i] == '\0')
            buf[i] = '\n';
    return n > 0 && strstr(buf, flag) != NULL;
}

/* Same root directory and same mount namespace: a path means the same
 * file to both of us (a container's private /tmp is a mount of its own). */
static int same_root(pid_t pid)
{
    char path[64], ours[64] = "", theirs[64] = "";
    struct stat a, b;
    snprintf(path, sizeof(path), "/proc/%d/root/", (int)pid);
    if (stat("/", &a) != 0 || stat(path, &b) != 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
        return 0;
    snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
    ssize_t n = readlink("/proc/self/ns/mnt", ours, sizeof(ours) - 1), m = readlink(path, theirs, sizeof(theirs) - 1);
    return n > 0 && n == m && memcmp(ours, theirs, (size_t)n) == 0;
}

int attach_target_find(pid_t pid, attach_target *t, char *err, size_t errlen)
{
    char path[64];
    memset(t, 0, sizeof(*t));
    t->pid = pid;
    if (pid <= 0 || (kill(pid, 0) < 0 && errno == ESRCH)) {
        snprintf(err, errlen, "no process %d — give the pid of a running JVM (see `jps` or `pgrep java`)", (int)pid);
        return -1;
    }
    int jvm = maps_libjvm(pid);
    if (jvm < 0) {
        snprintf(err, errlen, "cannot read /proc/%d/maps: %s — run wasp attach as the JVM's user or as root",
                 (int)pid, strerror(errno));
        return -1;
    }
    if (!jvm) {
        snprintf(err, errlen, "process %d is not a JVM (no libjvm.so is mapped) — give the pid of a "
                 "HotSpot JVM (see `jps`)", (int)pid);
        return -1;
    }
    if (parse_status(t, err, errlen) < 0)
        return -1;
    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    char env[64];
    snprintf(env, sizeof(env), "/proc/%d/environ", (int)pid);
    if (mentions(path, "-XX:+DisableAttachMechanism") || mentions(env, "-XX:+DisableAttachMechanism")) {
        snprintf(err, errlen, "JVM %d was started with -XX:+DisableAttachMechanism, which refuses every "
                 "attach — restart it without that flag, or profile it from the start with wasp run",
                 (int)pid);
        return -1;
    }
    snprintf(t->root, sizeof(t->root), "/proc/%d/root", (int)pid);
    t->other_root = !same_root(pid);
    t->coarse_lines = !mentions(path, "-XX:+DebugNonSafepoints") && !mentions(env, "-XX:+DebugNonSafepoints");
    return 0;
}

int attach_as_target(const attach_target *t, int (*f)(void *), void *arg, char *err, size_t errlen)
{
    uid_t uid = geteuid();
    gid_t gid = getegid();
    int switched = uid == 0 && (t->uid != uid || t->gid != gid);
    if (switched && (setegid(t->gid) < 0 || seteuid(t->uid) < 0)) {
        snprintf(err, errlen, "cannot take the JVM's user %u: %s", (unsigned)t->uid, strerror(errno));
        setegid(gid);
        return -1;
    }
    int rc = f(arg);
    if (switched && (seteuid(uid) < 0 || setegid(gid) < 0))
        return -1;
    return rc;
}

static void socket_path(const attach_target *t, char *out, size_t len)
{
    snprintf(out, len, "%s/tmp/.java_pid%d", t->root, (int)t->nspid);
}

static int is_socket(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Asks the JVM to open its socket: the trigger file, then SIGQUIT. */
static int wake_listener(const attach_target *t, const char *sock, int timeout_ms, char *err, size_t errlen)
{
    char trigger[128];
    snprintf(trigger, sizeof(trigger), "/proc/%d/cwd/.attach_pid%d", (int)t->pid, (int)t->nspid);
    int fd = open(trigger, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(trigger, sizeof(trigger), "%s/tmp/.attach_pid%d", t->root, (int)t->nspid);
        fd = open(trigger, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    }
    if (fd < 0) {
        snprintf(err, errlen, "cannot create %s: %s — run wasp attach as the JVM's user or as root",
                 trigger, strerror(errno));
        return -1;
    }
    close(fd);
    int rc = kill(t->pid, SIGQUIT);
    long long deadline = now_ms() + timeout_ms;
    while (rc == 0 && !is_socket(sock) && now_ms() < deadline) {
        struct timespec pause = { 0, 20 * 1000000L };
        nanosleep(&pause, NULL);
    }
    unlink(trigger);
    if (rc < 0) {
        snprintf(err, errlen, "cannot signal JVM %d: %s — run wasp attach as the JVM's user or as root",
                 (int)t->pid, strerror(errno));
        return -1;
    }
    if (!is_socket(sock)) {
        snprintf(err, errlen, "JVM %d did not open its attach socket within %d s (started with "
                 "-XX:+DisableAttachMechanism, or too busy?) — try again, or profile it from the "
                 "start with wasp run", (int)t->pid, timeout_ms / 1000);
        return -1;
    }
    return 0;
}

static int connect_socket(const char *path, char *err, size_t errlen)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof(addr.sun_path)) {
        snprintf(err, errlen, "attach socket path too long: %s", path);
        return -1;
    }
    memcpy(addr.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0)
        return fd;
    snprintf(err, errlen, "cannot connect to %s: %s — run wasp attach as the JVM's user or as root",
             path, strerror(errno));
    if (fd >= 0)
        close(fd);
    return -1;
}

static int send_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* The answer, until the JVM closes the connection or timeout_ms pass. */
static ssize_t receive_all(int fd, char *buf, size_t len, int timeout_ms)
{
    size_t n = 0;
    long long deadline = now_ms() + timeout_ms;
    while (n + 1 < len) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        long long left = deadline - now_ms();
        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            return -1;
        ssize_t r = read(fd, buf + n, len - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    buf[n] = '\0';
    return (ssize_t)n;
}

static int parse_answer(const char *answer, int *agent_rc, char *err, size_t errlen)
{
    char *end;
    long status = strtol(answer, &end, 10);
    if (end == answer) {
        snprintf(err, errlen, "the JVM's attach listener answered nothing wasp understands: '%.80s'", answer);
        return -1;
    }
    const char *rest = end + strspn(end, "\n");
    if (status != 0) {
        snprintf(err, errlen, "the JVM refused to load the agent (status %ld): %.200s", status, rest);
        err[strcspn(err, "\n")] = '\0';
        return -1;
    }
    const char *code = strstr(rest, "return code:");
    code = code ? code + strlen("return code:") : rest;
    *agent_rc = (int)strtol(code, &end, 10);
    if (end == code) {
        snprintf(err, errlen, "the JVM loaded the agent but gave no return code: '%.80s'", rest);
        return -1;
    }
    return 0;
}

int attach_load(const attach_target *t, const char *lib, const char *options, int timeout_ms,
                int *agent_rc, char *err, size_t errlen)
{
    char sock[160], answer[4096];
    static char request[8192];
    socket_path(t, sock, sizeof(sock));
    if (!is_socket(sock) && wake_listener(t, sock, timeout_ms, err, errlen) < 0)
        return -1;
    int fd = connect_socket(sock, err, errlen);
    if (fd < 0)
        return -1;
    int n = snprintf(request, sizeof(request), "1%cload%c%s%ctrue%c%s%c", 0, 0, lib, 0, 0, options, 0);
    if (n < 0 || (size_t)n >= sizeof(request) || send_all(fd, request, (size_t)n) < 0) {
        snprintf(err, errlen, "cannot send the load command to JVM %d: %s", (int)t->pid, strerror(errno));
        close(fd);
        return -1;
    }
    /* The agent enumerates classes, code and threads: seconds on a big JVM. */
    ssize_t got = receive_all(fd, answer, sizeof(answer), 120000);
    close(fd);
    if (got <= 0) {
        snprintf(err, errlen, "JVM %d gave no answer to the load command within 120 s", (int)t->pid);
        return -1;
    }
    return parse_answer(answer, agent_rc, err, errlen);
}

/*
 * attach_socket.h - HotSpot's dynamic attach mechanism, client side: find
 * the JVM, wake its Attach Listener, send one command over its socket.
 */
#ifndef WASP_ATTACH_SOCKET_H
#define WASP_ATTACH_SOCKET_H

#include <stddef.h>
#include <sys/types.h>

typedef struct attach_target {
    pid_t pid;          /* as we see it */
    pid_t nspid;        /* as the JVM sees itself (its pid namespace) */
    uid_t uid;          /* the JVM's effective ids: the attach socket is theirs */
    gid_t gid;
    char root[64];      /* "/proc/PID/root": its file system, whatever its mount namespace */
    int other_root;     /* its root is not ours (a container): paths must be translated */
    int coarse_lines;   /* no -XX:+DebugNonSafepoints in its options: code compiled before the
                           attach maps to source lines at safepoints only */
} attach_target;

/* Checks pid is a HotSpot JVM wasp can attach to without harm (it exists,
 * maps libjvm.so, catches SIGQUIT, was not started with
 * -XX:+DisableAttachMechanism). 0, or -1 with a message naming the fix. */
int attach_target_find(pid_t pid, attach_target *t, char *err, size_t errlen);

/* Runs f(arg) with the JVM's effective uid and gid when we are root and
 * they differ (the JVM checks its peer's credentials, and files made for it
 * must be its own), then switches back. Returns f's result, or -1 with a
 * message when the switch fails. */
int attach_as_target(const attach_target *t, int (*f)(void *), void *arg, char *err, size_t errlen);

/* Sends "load LIB true OPTIONS" (protocol 1), waking the Attach Listener
 * first if its socket is not there yet (bounded by timeout_ms). lib is a
 * path in the JVM's file system. *agent_rc gets Agent_OnAttach's return.
 * 0, or -1 with a message. Call it through attach_as_target. */
int attach_load(const attach_target *t, const char *lib, const char *options, int timeout_ms,
                int *agent_rc, char *err, size_t errlen);

#endif

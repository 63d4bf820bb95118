/*
 * setuid_hook.c - a process that drops its privileges still writes its
 * profiles.
 *
 * Daemons start as root and become an unprivileged user (nginx's workers,
 * sshd's session child, postfix): the pid directory wasp made is root's,
 * 0700, and such a program lost its profile ("Permission denied", and the
 * report blamed a kill), and its frames went unnamed (a process that
 * changed users is not dumpable: its /proc/PID/maps is root's). Before the
 * effective user changes, the naming session is made (native.h) and root
 * hands the directory and the manifest to the new user
 * (engine_before_setuid). A raw system call is not seen.
 */
#include <dlfcn.h>
#include <unistd.h>

#include "native.h"

typedef int (*set1_fn)(uid_t);
typedef int (*set2_fn)(uid_t, uid_t);
typedef int (*set3_fn)(uid_t, uid_t, uid_t);

static void *real(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

static void before(uid_t euid)
{
    if (!engine_owns_process() || euid == (uid_t)-1 || euid == geteuid())
        return;
    native_symbols_prepare();
    engine_before_setuid(euid);
}

int setuid(uid_t uid)
{
    static set1_fn f;
    if (!f)
        f = (set1_fn)real("setuid");
    before(uid);
    return f(uid);
}

int seteuid(uid_t euid)
{
    static set1_fn f;
    if (!f)
        f = (set1_fn)real("seteuid");
    before(euid);
    return f(euid);
}

int setreuid(uid_t ruid, uid_t euid)
{
    static set2_fn f;
    if (!f)
        f = (set2_fn)real("setreuid");
    before(euid);
    return f(ruid, euid);
}

int setresuid(uid_t ruid, uid_t euid, uid_t suid)
{
    static set3_fn f;
    if (!f)
        f = (set3_fn)real("setresuid");
    before(euid);
    return f(ruid, euid, suid);
}

/*
 * chroot_hook.c - a process that chroots still gets its frames named.
 *
 * Daemons drop into an empty root after start-up (OpenSSH's privilege-
 * separated child, postfix, vsftpd, bind). Profiles are written through the
 * pid directory wasp holds (publish.h), but frames are named at the end
 * with libdw, which reads /proc/PID/maps and each library's file: neither
 * exists inside the new root, and every frame read `[0x55b5be327291] (?)`.
 * So before a chroot the naming session is made and every loaded object's
 * file is opened (libdw keeps them open), while the paths still resolve.
 */
#include <dlfcn.h>

#include "native.h"

typedef int (*chroot_fn)(const char *);

int chroot(const char *path)
{
    static chroot_fn real;
    if (!real)
        real = (chroot_fn)dlsym(RTLD_NEXT, "chroot");
    if (engine_owns_process())
        native_symbols_prepare();
    return real(path);
}

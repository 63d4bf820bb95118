/*
 * msan_scope.c - MemorySanitizer's interceptor checks off around wasp's
 * own work (msan_scope.h).
 */
#include "msan_scope.h"

#include <dlfcn.h>
#include <errno.h>

typedef void (*msan_scope_fn)(void);

void msan_checks(int on)
{
    static msan_scope_fn scope[2];
    static int looked;
    int saved = errno;
    if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
        scope[0] = (msan_scope_fn)dlsym(RTLD_DEFAULT, "__msan_scoped_disable_interceptor_checks");
        scope[1] = (msan_scope_fn)dlsym(RTLD_DEFAULT, "__msan_scoped_enable_interceptor_checks");
        __atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
    }
    if (scope[0] && scope[1])
        scope[on != 0]();
    errno = saved;
}

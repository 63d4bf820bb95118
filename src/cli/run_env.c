/*
 * run_env.c - LD_PRELOAD and JAVA_TOOL_OPTIONS for any library path.
 *
 * ld.so splits LD_PRELOAD on spaces and colons and knows no quoting, so a
 * library under "/opt/my tools/" cannot be named there. A name without a
 * slash is looked up like a DT_NEEDED library, through LD_LIBRARY_PATH,
 * which is split on ':' and ';' only: such a path goes there, and
 * LD_PRELOAD names just "libwasp.so". The JVM splits JAVA_TOOL_OPTIONS on
 * whitespace but honours '...' and "..." (HotSpot since JDK 9; checked on
 * 17 and 25), so the agent's item is quoted when it must be. The options
 * themselves are escaped by options_escape, so commas in a path never
 * become options.
 *
 * AddressSanitizer's runtime (gcc's libasan, linked shared) refuses to start
 * unless it is the first library loaded and exits the program with status 1:
 * with libwasp.so preloaded, every ASan build failed under wasp run. Its
 * own option verify_asan_link_order=0 lets it start second; it goes first
 * in ASAN_OPTIONS, so a user's own setting of it still wins.
 */
#include "run_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RUN_ENV_MAX 16384

static int run_env_put(const char *name, const char *value, char *err, size_t errlen)
{
    if (setenv(name, value, 1) == 0)
        return 0;
    snprintf(err, errlen, "cannot set %s — the environment is full", name);
    return -1;
}

/* "first[:old]" into out; 0, or -1 when it does not fit. */
static int run_env_prepend(char *out, size_t len, const char *first, const char *old)
{
    int has = old && *old;
    return snprintf(out, len, "%s%s%s", first, has ? ":" : "", has ? old : "") < (int)len ? 0 : -1;
}

static int run_env_preload(const char *lib, char *err, size_t errlen)
{
    char preload[RUN_ENV_MAX], path[RUN_ENV_MAX];
    const char *base = strrchr(lib, '/') + 1;
    if (!strpbrk(lib, " \t\n:")) {
        if (run_env_prepend(preload, sizeof preload, lib, getenv("LD_PRELOAD")) < 0)
            goto too_long;
        return run_env_put("LD_PRELOAD", preload, err, errlen);
    }
    char dir[RUN_ENV_MAX];
    snprintf(dir, sizeof dir, "%.*s", (int)(base - 1 - lib), lib);
    if (strpbrk(dir, ":;\n") || strpbrk(base, " \t\n:")) {
        snprintf(err, errlen, "the path of libwasp.so (%s) holds a ':' or ';', which LD_PRELOAD "
                 "cannot carry — install wasp under a path without them", lib);
        return -1;
    }
    if (run_env_prepend(preload, sizeof preload, base, getenv("LD_PRELOAD")) < 0 ||
        run_env_prepend(path, sizeof path, dir, getenv("LD_LIBRARY_PATH")) < 0)
        goto too_long;
    return run_env_put("LD_PRELOAD", preload, err, errlen) ||
           run_env_put("LD_LIBRARY_PATH", path, err, errlen) ? -1 : 0;
too_long:
    snprintf(err, errlen, "LD_PRELOAD would be too long — shorten LD_PRELOAD or the wasp path");
    return -1;
}

/* -agentpath:LIB=OPTIONS, quoted when it holds whitespace or quotes. */
static int run_env_java(const char *lib, const char *options, char *err, size_t errlen)
{
    char item[RUN_ENV_MAX], tool[RUN_ENV_MAX];
    const char *old = getenv("JAVA_TOOL_OPTIONS");
    if (snprintf(item, sizeof item, "%s=%s", lib, options) >= (int)sizeof item)
        goto too_long;
    const char *q = "";
    if (strpbrk(item, " \t\n\r\f\v'\"")) {
        q = !strchr(item, '"') ? "\"" : !strchr(item, '\'') ? "'" : NULL;
        if (!q) {
            snprintf(err, errlen, "the wasp path and -o DIR hold both kinds of quote, which "
                     "JAVA_TOOL_OPTIONS cannot carry — use a directory without quotes");
            return -1;
        }
    }
    if (snprintf(tool, sizeof tool, "-agentpath:%s%s%s%s%s", q, item, q, old && *old ? " " : "",
                 old ? old : "") >= (int)sizeof tool)
        goto too_long;
    return run_env_put("JAVA_TOOL_OPTIONS", tool, err, errlen);
too_long:
    snprintf(err, errlen, "JAVA_TOOL_OPTIONS would be too long — shorten it or the -o path");
    return -1;
}

static int run_env_asan(char *err, size_t errlen)
{
    char value[RUN_ENV_MAX];
    if (run_env_prepend(value, sizeof value, "verify_asan_link_order=0", getenv("ASAN_OPTIONS")) < 0) {
        snprintf(err, errlen, "ASAN_OPTIONS would be too long — shorten it");
        return -1;
    }
    return run_env_put("ASAN_OPTIONS", value, err, errlen);
}

int run_env_set(const char *lib, const char *options, char *err, size_t errlen)
{
    if (run_env_preload(lib, err, errlen) != 0 || run_env_java(lib, options, err, errlen) != 0 ||
        run_env_asan(err, errlen) != 0)
        return -1;
    return run_env_put("WASP_OPTIONS", options, err, errlen);
}

int run_env_java_agent(const char *lib, const char *options, char *err, size_t errlen)
{
    return run_env_java(lib, options, err, errlen);
}

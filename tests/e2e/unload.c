/*
 * unload.c - runs a library's code, unloads it, then loads another (wasp
 * e2e test, case unload).
 *
 * Profiles name native frames when they are written, at exit, from the
 * objects mapped then: the pairs of unload_plugin.so, whose planted dead
 * store made all of them, read "[0x7f...] (?)" with no function, file or
 * line, and where unload_other.so took its addresses they would have named
 * that library's code. dlclose is interposed to remember what it unloads
 * (src/native/unloads.c).
 *
 * Usage: unload DIR [SECONDS]: loads DIR/unload_plugin.so and runs it until
 * the process used SECONDS of CPU time (default 2), unloads it, loads
 * DIR/unload_other.so (kept to the end), and prints "unload same-place" or
 * "unload elsewhere": whether the second library took the first's place.
 */
#define _GNU_SOURCE   /* dlinfo */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *load(const char *dir, const char *name, const char *symbol, void **fn, ElfW(Addr) *base)
{
    char path[4096];
    struct link_map *map = NULL;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h || !(*fn = dlsym(h, symbol)) || dlinfo(h, RTLD_DI_LINKMAP, &map) != 0) {
        fprintf(stderr, "unload: %s\n", dlerror());
        exit(1);
    }
    *base = map->l_addr;
    return h;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    double secs = argc > 2 ? atof(argv[2]) : 2;
    void *fn;
    ElfW(Addr) first, second;
    void *h = load(dir, "unload_plugin.so", "plugin_work", &fn, &first);
    long (*work)(long) = (long (*)(long))fn;
    while (cpu_seconds() < secs)
        work(64);
    dlclose(h);
    load(dir, "unload_other.so", "other_work", &fn, &second);
    ((long (*)(long))fn)(1);
    printf("unload %s\n", first == second ? "same-place" : "elsewhere");
    return 0;
}

/*
 * dlclose_hook.c - dlclose, interposed: what it unloads is noted
 * (unloads.c) so that profiles still name that code.
 *
 * The loaded objects are listed before and after the real dlclose, not
 * under a lock: the library's destructors may dlclose too, and another
 * thread's dlclose in between only adds objects that did go away. Nothing
 * is done while wasp does not profile the process.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"

#define SNAPSHOT_MAX 1024     /* objects loaded at once that a snapshot sees */

typedef struct snapshot {
    loaded_object o[SNAPSHOT_MAX];
    int n;
} snapshot;

static int note_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
    snapshot *s = data;
    (void)size;
    /* The main program and the vDSO are never unloaded. */
    if (!info->dlpi_name || !info->dlpi_name[0] || s->n >= SNAPSHOT_MAX)
        return 0;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type != PT_LOAD)
            continue;
        uint64_t start = info->dlpi_addr + p->p_vaddr;
        if (start < lo)
            lo = start;
        if (start + p->p_memsz > hi)
            hi = start + p->p_memsz;
    }
    /* Copied here, under the loader's lock: another thread's dlclose may
     * free the loader's string as soon as the walk ends. */
    char *path = strdup(info->dlpi_name);
    if (lo >= hi || !path) {
        free(path);
        return 0;
    }
    s->o[s->n++] = (loaded_object){ .path = path, .base = info->dlpi_addr, .lo = lo, .hi = hi };
    return 0;
}

/* The loaded objects. NULL when out of memory. */
static snapshot *take_snapshot(void)
{
    snapshot *s = calloc(1, sizeof(*s));
    if (s)
        dl_iterate_phdr(note_loaded, s);
    return s;
}

static void free_snapshot(snapshot *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n; i++)
        free(s->o[i].path);
    free(s);
}

typedef int (*dlclose_fn)(void *);

int dlclose(void *handle)
{
    static dlclose_fn real;
    if (!real)
        real = (dlclose_fn)dlsym(RTLD_NEXT, "dlclose");
    if (!engine_active())
        return real(handle);
    /* Not under our lock: the library's destructors may dlclose too. */
    snapshot *before = take_snapshot();
    int rc = real(handle), saved_errno = errno;
    snapshot *after = before ? take_snapshot() : NULL;
    if (after)
        unloads_note(before->o, before->n, after->o, after->n);
    free_snapshot(before);
    free_snapshot(after);
    errno = saved_errno;
    return rc;
}


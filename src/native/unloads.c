/*
 * unloads.c - the libraries a program unloads (dlclose), remembered so that
 * its profile still names their code.
 *
 * Frames are named when a profile is written, at a thread's end or at exit,
 * from the objects mapped then. A library unloaded before that left its
 * pairs unnamed ("[0x7f...] (?)"), or named after whatever library was
 * loaded into its addresses since: a report blaming the wrong function.
 * dlclose is interposed (dlclose_hook.c) to note each object it unloads
 * (path, load base, address range), and native frames carry the count of unloads that changed
 * what code lives where when they were captured (their aux): a frame is then
 * named from the first noted object that covered its pc and was unloaded
 * after its capture, if any, else from the objects mapped at write time.
 *
 * The count moves only when an unload notes an object not noted before at
 * that place: a program that loads and unloads one plugin in a loop keeps
 * one generation, and its contexts do not multiply.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"

typedef struct unloaded_object {
    loaded_object o;
    uint64_t until;   /* the last generation whose frames may be its code */
} unloaded_object;

static pthread_mutex_t unloads_lock = PTHREAD_MUTEX_INITIALIZER;
static unloaded_object unloads[UNLOADS_MAX];
static int unloads_n;
static uint64_t generation;

static int same_object(const loaded_object *a, const loaded_object *b)
{
    return a->base == b->base && a->lo == b->lo && strcmp(a->path, b->path) == 0;
}

static int overlap(const loaded_object *a, const loaded_object *b)
{
    return a->lo < b->hi && b->lo < a->hi;
}

static int still_loaded(const loaded_object *after, int na, const loaded_object *o)
{
    for (int i = 0; i < na; i++)
        if (same_object(&after[i], o))
            return 1;
    return 0;
}

/* Notes o, unloaded, under the lock. The latest note over its range is o
 * itself when the same object was unloaded from there before (a plugin
 * reloaded): that note stretches; otherwise o is new, and frames captured
 * from now on belong to whatever comes next at those addresses. Returns
 * whether the generation must move. */
static int note_unloaded(const loaded_object *o)
{
    for (int i = unloads_n - 1; i >= 0; i--) {
        if (!overlap(&unloads[i].o, o))
            continue;
        if (!same_object(&unloads[i].o, o))
            break;
        unloads[i].until = generation;
        return 0;
    }
    if (unloads_n >= UNLOADS_MAX)
        return 0;
    char *path = strdup(o->path);
    if (!path)
        return 0;
    unloads[unloads_n++] = (unloaded_object){ .o = { path, o->base, o->lo, o->hi }, .until = generation };
    return 1;
}

/* The objects of before that after lacks were unloaded. */
void unloads_note(const loaded_object *before, int nb, const loaded_object *after, int na)
{
    int moved = 0;
    pthread_mutex_lock(&unloads_lock);
    for (int i = 0; i < nb; i++)
        if (!still_loaded(after, na, &before[i]))
            moved |= note_unloaded(&before[i]);
    if (moved)
        __atomic_add_fetch(&generation, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&unloads_lock);
}

uint64_t unloads_generation(void)
{
    return __atomic_load_n(&generation, __ATOMIC_ACQUIRE);
}

int unloads_find(uint64_t pc, uint64_t gen, const char **path, uint64_t *base)
{
    int found = -1;
    pthread_mutex_lock(&unloads_lock);
    for (int i = 0; i < unloads_n; i++) {
        const unloaded_object *u = &unloads[i];
        if (pc < u->o.lo || pc >= u->o.hi || u->until < gen)
            continue;
        if (found < 0 || u->until < unloads[found].until)
            found = i;
    }
    if (found >= 0) {
        *path = unloads[found].o.path;
        *base = unloads[found].o.base;
    }
    pthread_mutex_unlock(&unloads_lock);
    return found;
}

void unloads_after_fork_child(void)
{
    pthread_mutex_init(&unloads_lock, NULL);
}

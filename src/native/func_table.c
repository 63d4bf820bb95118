/*
 * func_table.c - where functions start, from ELF symbol tables, for code
 * that libunwind has no unwind entry for.
 *
 * A sample needs the start of the function around its pc: x86 code decodes
 * only forwards. libunwind gives it from .eh_frame, which code built with
 * -fno-asynchronous-unwind-tables, hand-written assembly without CFI and Go
 * do not have; there it answers with a one-byte stand-in, and every sample
 * there was lost. The symbol table usually still says where each function
 * starts and how long it is.
 *
 * Reading it needs libdw, malloc and files: never in a handler. A handler
 * that finds no table for its pc asks for one (one request at a time, a
 * compare-and-swap) and the process's writer thread builds it; samples
 * after that find it. Tables are published once, append-only, and never
 * freed, so a handler reads them without a lock.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "native.h"
#include "writer.h"

typedef struct func_range {
    uint64_t start, end;
} func_range;

/* One object's functions, or none (a stripped object, anonymous code): a
 * table with no ranges still answers "not here" without a new request. */
typedef struct module_table {
    uint64_t lo, hi;          /* the addresses it answers for */
    uint64_t generation;      /* unloads_generation() when built: what was mapped */
    const func_range *ranges; /* sorted by start */
    size_t n;
} module_table;

#define MODULE_TABLES 128
static module_table tables[MODULE_TABLES];
static int published;         /* tables[0, published) are complete */
static uint64_t wanted;       /* a pc whose table is asked for; 0: none */

/* Signal context. The innermost function around pc in t, found among
 * the few that start last before it (an assembly file may mark an inner
 * entry point as a function of its own). */
static int lookup(const module_table *t, uint64_t pc, uint64_t *start, uint64_t *end)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->ranges[mid].start <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo, seen = 0; i > 0 && seen < 16; i--, seen++) {
        const func_range *r = &t->ranges[i - 1];
        if (pc < r->end) {
            *start = r->start;
            *end = r->end;
            return 0;
        }
    }
    return -1;
}

int func_table_bounds(uint64_t pc, uint64_t *start, uint64_t *end)
{
    int n = __atomic_load_n(&published, __ATOMIC_ACQUIRE);
    uint64_t gen = unloads_generation();
    for (int i = 0; i < n; i++)
        if (tables[i].generation == gen && tables[i].lo <= pc && pc < tables[i].hi)
            return lookup(&tables[i], pc, start, end);
    uint64_t none = 0;
    if (n < MODULE_TABLES &&
        __atomic_compare_exchange_n(&wanted, &none, pc, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED) &&
        writer_request_tables() < 0)
        __atomic_store_n(&wanted, 0, __ATOMIC_RELEASE);   /* no writer here: ask again later */
    return -1;
}

typedef struct collected {
    func_range *r;
    size_t n, cap;
} collected;

static void collect(uint64_t start, uint64_t size, void *arg)
{
    collected *c = arg;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 1024;
        func_range *r = realloc(c->r, cap * sizeof(*r));
        if (!r)
            return;
        c->r = r;
        c->cap = cap;
    }
    c->r[c->n++] = (func_range){ start, start + size };
}

static int by_start(const void *a, const void *b)
{
    const func_range *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->end > y->end ? -1 : x->end < y->end;   /* the longest first */
}

/* Sorted, one range per start (the longest of aliases); a symbol of no
 * size (assembly without .size) runs to the next start, or to hi. */
static size_t normalize(func_range *r, size_t n, uint64_t hi)
{
    size_t k = 0;
    qsort(r, n, sizeof(*r), by_start);
    for (size_t i = 0; i < n; i++)
        if (k == 0 || r[i].start != r[k - 1].start)
            r[k++] = r[i];
    for (size_t i = 0; i < k; i++)
        if (r[i].end == r[i].start)
            r[i].end = i + 1 < k ? r[i + 1].start : hi;
    return k;
}

/* Handlers read the copy for ever: mmap'd, never freed. */
static const func_range *keep(const func_range *r, size_t n)
{
    if (n == 0)
        return NULL;
    void *p = mmap(NULL, n * sizeof(*r), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    memcpy(p, r, n * sizeof(*r));
    return p;
}

static void publish(uint64_t lo, uint64_t hi, const func_range *ranges, size_t n)
{
    int i = __atomic_load_n(&published, __ATOMIC_RELAXED);
    if (i >= MODULE_TABLES)
        return;
    tables[i] = (module_table){ lo, hi, unloads_generation(), ranges, ranges ? n : 0 };
    __atomic_store_n(&published, i + 1, __ATOMIC_RELEASE);
}

/* The mapping holding pc, from /proc/self/maps. */
static int mapping_of(uint64_t pc, uint64_t *lo, uint64_t *hi)
{
    FILE *f = fopen("/proc/self/maps", "re");
    char line[512];
    int found = -1;
    if (!f)
        return -1;
    while (found < 0 && fgets(line, sizeof line, f))
        if (sscanf(line, "%" SCNx64 "-%" SCNx64, lo, hi) == 2 && *lo <= pc && pc < *hi)
            found = 0;
    fclose(f);
    return found;
}

void func_table_serve(void)
{
    uint64_t pc = __atomic_load_n(&wanted, __ATOMIC_ACQUIRE), lo, hi;
    collected c = { 0 };
    if (!pc)
        return;
    if (native_function_symbols(pc, &lo, &hi, collect, &c) == 0) {
        size_t n = normalize(c.r, c.n, hi);
        publish(lo, hi, keep(c.r, n), n);
    } else if (mapping_of(pc, &lo, &hi) == 0) {
        publish(lo, hi, NULL, 0);   /* code no object holds (a JIT's): no symbols to read */
    } else {
        publish(pc & ~4095ull, (pc & ~4095ull) + 4096, NULL, 0);   /* ask no more for this page */
    }
    free(c.r);
    __atomic_store_n(&wanted, 0, __ATOMIC_RELEASE);
}

void func_table_after_fork_child(void)
{
    __atomic_store_n(&wanted, 0, __ATOMIC_RELEASE);   /* the parent's writer was serving it */
}

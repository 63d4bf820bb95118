/*
 * exact_shadow.c - per-byte shadow state and the pairing rules (paper §4),
 * applied to every access the instrumentation reports.
 *
 * Each byte the program touches has 43 bits of state: the thread index, the
 * leaf context of the last access of the monitored kind to it (0: nothing
 * pending), and whether that access's value is unknown; the silent modes
 * keep the byte's value too (what C1 stored or loaded, as the sampled
 * engine saves it when it arms a watch). To stay within the memory budget
 * (docs/benchmarks.md) the state is kept per 8-byte granule: one state and
 * a mask of the bytes it covers, which holds whenever the pending bytes of
 * a granule come from one access (nearly always: aligned loads and stores
 * of 1-8 bytes); a granule whose bytes differ is "split" into 8 states in a
 * side pool until one access covers it again. So the shadow costs 1 byte
 * per byte (2 with values) instead of 4. State lives in 64 KiB chunks,
 * allocated on first touch, behind a two-level table (addr >> 32, then bits
 * 16-31), so memory follows what the program touches, never its address
 * space. Pairing is per thread, as a debug register is: another thread's
 * access ends a pending access without a pair (XS_CROSS_THREAD).
 * Runs on every load/store: no allocation except a first-touch chunk.
 */
#include "exact.h"

#include "pub_tool_libcbase.h"
#include "pub_tool_mallocfree.h"

#define CHUNK_BITS 16
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define L2_SIZE (1u << (32 - CHUNK_BITS))
#define L1_SIZE (1u << 16)           /* 48-bit addresses */

/* A granule: bits 0-42 the state (or, when split, a pool index), bits
 * 43-50 the bytes the state covers, bit 51 split. */
#define G_MASK_SHIFT EXACT_STATE_BITS
#define G_STATE ((1ULL << EXACT_STATE_BITS) - 1)
#define G_SPLIT (1ULL << (G_MASK_SHIFT + 8))

typedef struct chunk {
    ULong granule[CHUNK_SIZE / 8];
    UChar *value;                    /* CHUNK_SIZE bytes; silent modes only */
} chunk;

/* Split granules: 8 states each; free entries chained through [0]. */
static ULong (*pool)[8];
static UInt pool_used, pool_cap, pool_free;

static UInt pool_new(void)
{
    if (pool_free) {
        UInt i = pool_free;
        pool_free = (UInt)pool[i][0];
        return i;
    }
    if (pool_used + 1 >= pool_cap) {
        pool_cap = pool_cap ? pool_cap * 2 : 4096;
        pool = VG_(realloc)("wasp.shadow", pool, (SizeT)pool_cap * sizeof(*pool));
    }
    return ++pool_used;   /* index 0 unused */
}

/* State of byte b (0-7) of a granule. */
static inline ULong g_get(ULong g, UInt b)
{
    if (g & G_SPLIT)
        return pool[(UInt)g][b];
    return (g >> (G_MASK_SHIFT + b)) & 1 ? g & G_STATE : 0;
}

/* A split granule whose bytes agree again becomes one state. */
static void g_collapse(ULong *g)
{
    ULong *st = pool[(UInt)*g], v = 0;
    UInt mask = 0;
    for (UInt b = 0; b < 8; b++) {
        if (!st[b])
            continue;
        if (v && st[b] != v)
            return;
        v = st[b];
        mask |= 1u << b;
    }
    st[0] = pool_free;
    pool_free = (UInt)*g;
    *g = v | (ULong)mask << G_MASK_SHIFT;
}

/* Sets the bytes in am (a mask) of a granule to state fresh (0: none). */
static void g_set(ULong *g, UInt am, ULong fresh)
{
    if (!(*g & G_SPLIT)) {
        UInt mask = (UInt)(*g >> G_MASK_SHIFT) & 0xff, other = mask & ~am;
        ULong state = *g & G_STATE;
        if (!other || (fresh && state == fresh)) {
            *g = fresh ? fresh | (ULong)(other | am) << G_MASK_SHIFT : 0;
            return;
        }
        if (!fresh) {
            *g = state | (ULong)other << G_MASK_SHIFT;
            return;
        }
        UInt i = pool_new();
        for (UInt b = 0; b < 8; b++)
            pool[i][b] = (other >> b) & 1 ? state : 0;
        *g = G_SPLIT | i;
    }
    for (UInt b = 0; b < 8; b++)
        if ((am >> b) & 1)
            pool[(UInt)*g][b] = fresh;
    g_collapse(g);
}

static chunk **l1[L1_SIZE];
static Bool keep_values;
static Addr cached_base = 1;         /* no chunk starts at 1: the cache starts empty */
static chunk *cached;

static chunk *chunk_new(void)
{
    chunk *c = VG_(calloc)("wasp.shadow", 1, sizeof(chunk));
    if (keep_values)
        c->value = VG_(calloc)("wasp.shadow", CHUNK_SIZE, 1);
    return c;
}

static chunk *chunk_of(Addr a)
{
    Addr base = a & ~(Addr)(CHUNK_SIZE - 1);
    if (base == cached_base)
        return cached;
    UWord i1 = (a >> 32) & (L1_SIZE - 1), i2 = (a >> CHUNK_BITS) & (L2_SIZE - 1);
    if (!l1[i1])
        l1[i1] = VG_(calloc)("wasp.shadow", L2_SIZE, sizeof(chunk *));
    if (!l1[i1][i2])
        l1[i1][i2] = chunk_new();
    cached_base = base;
    cached = l1[i1][i2];
    return cached;
}

/* Whether a's chunk was ever touched (no allocation): an untouched one has
 * nothing pending. */
static Bool chunk_exists(Addr a)
{
    UWord i1 = (a >> 32) & (L1_SIZE - 1), i2 = (a >> CHUNK_BITS) & (L2_SIZE - 1);
    return l1[i1] && l1[i1][i2];
}

/* Relative FP closeness, as the sampled detector (detect.c); no libm here. */
static Bool close_enough(double a, double b)
{
    if (a != a || b != b)
        return False;
    double x = a < 0 ? -a : a, y = b < 0 ? -b : b, d = a - b;
    if (d < 0)
        d = -d;
    return d <= exact_opts.fp_tolerance * (x > y ? x : y);
}

static Bool close_f64(ULong a, ULong b)
{
    double x, y;
    VG_(memcpy)(&x, &a, 8);
    VG_(memcpy)(&y, &b, 8);
    return close_enough(x, y);
}

static Bool close_f32(UInt a, UInt b)
{
    float x, y;
    VG_(memcpy)(&x, &a, 4);
    VG_(memcpy)(&y, &b, 4);
    return close_enough(x, y);
}

/* The C1 contexts an access's bytes were pending from: nearly always one. */
typedef struct group {
    UInt c1, n;
    Bool equal, unknown;
} group;

static void group_add(group *g, UInt *ng, UInt c1, Bool equal, Bool unknown)
{
    for (UInt k = 0; k < *ng; k++) {
        if (g[k].c1 == c1) {
            g[k].n++;
            g[k].equal &= equal;
            g[k].unknown |= unknown;
            return;
        }
    }
    g[*ng] = (group){ c1, 1, equal, unknown };
    (*ng)++;
}

/* Whether the access is left out: a stack probe, or the thread's own stack
 * under --stack exclude (the sampled engine's filters, handler.c). */
static Bool filtered(exact_thread *t, Addr addr, UInt kind, Addr sp)
{
    if ((kind & EXACT_STORE) && addr < sp - 128 && sp - addr < (1u << 20)) {
        t->stats[XS_STACK_PROBE]++;
        return True;
    }
    if (exact_opts.stack_exclude && addr >= t->stack_lo && addr < t->stack_hi) {
        t->stats[XS_STACK]++;
        return True;
    }
    return False;
}

/* Records the pairs that end at this access. old/now: the whole access's
 * previous (from the shadow) and new values, for the FP comparison when one
 * C1 covers every byte. */
static void record(exact_thread *t, const group *g, UInt ng, UInt ctx, UInt size, UInt kind,
                   Bool known, ULong old, ULong now)
{
    for (UInt k = 0; k < ng; k++) {
        UInt wasteful = 0, a64 = 0, a32 = 0;
        if (exact_opts.mode == EXACT_DEAD_STORE) {
            /* A store kills what it overwrites; a load (or RMW's load) makes it useful. */
            wasteful = kind == EXACT_STORE ? g[k].n : 0;
        } else if (kind == (EXACT_LOAD | EXACT_STORE)) {
            /* a read-modify-write in silent-load mode: not silent */
        } else if (known && !g[k].unknown && g[k].equal) {
            wasteful = g[k].n;
        } else if (known && !g[k].unknown && ng == 1 && g[k].n == size) {
            /* Which of these applies is decided by C1's instruction, when
             * the CLI decodes it (exact_convert.c). */
            if (size == 8) {
                a64 = close_f64(old, now) ? size : 0;
                a32 = close_f32((UInt)old, (UInt)now) && close_f32((UInt)(old >> 32), (UInt)(now >> 32)) ? size : 0;
            } else if (size == 4) {
                a32 = close_f32((UInt)old, (UInt)now) ? size : 0;
            }
        }
        exact_pair_add(t->index, g[k].c1, ctx, g[k].n, wasteful, a64, a32);
        t->stats[XS_PAIRS]++;
    }
}

/* The pending bytes of one access, read byte by byte (any granules). */
static UInt read_bytes(exact_thread *t, Addr addr, UInt size, ULong value, group *g, ULong *old)
{
    UInt ng = 0, me = t->index;
    for (UInt i = 0; i < size; i++) {
        Addr a = addr + i;
        chunk *c = chunk_of(a);
        UInt off = (UInt)(a & (CHUNK_SIZE - 1));
        ULong s = g_get(c->granule[off >> 3], off & 7);
        UChar now = (UChar)(value >> (8 * i));
        if (s && (s & (EXACT_MAX_THREADS - 1)) == me) {
            UChar was = c->value ? c->value[off] : 0;
            *old |= (ULong)was << (8 * i);
            group_add(g, &ng, (UInt)(s >> EXACT_CTX_SHIFT), was == now, (s & EXACT_UNKNOWN_BIT) != 0);
        } else if (s) {
            t->stats[XS_CROSS_THREAD]++;
        }
    }
    return ng;
}

/* The same for the common case, an access inside one granule that is not
 * split: one state for all its pending bytes. */
static UInt read_granule(exact_thread *t, chunk *c, UInt off, UInt size, ULong value, group *g, ULong *old)
{
    ULong gr = c->granule[off >> 3];
    UInt am = ((1u << size) - 1) << (off & 7), covered = (UInt)(gr >> G_MASK_SHIFT) & am;
    ULong s = gr & G_STATE;
    if (!covered)
        return 0;
    if ((s & (EXACT_MAX_THREADS - 1)) != t->index) {
        t->stats[XS_CROSS_THREAD] += (UInt)__builtin_popcount(covered);
        return 0;
    }
    g[0] = (group){ (UInt)(s >> EXACT_CTX_SHIFT), (UInt)__builtin_popcount(covered), True,
                    (s & EXACT_UNKNOWN_BIT) != 0 };
    for (UInt i = 0; c->value && i < size; i++) {
        if (!((covered >> ((off & 7) + i)) & 1))
            continue;
        UChar was = c->value[off + i];
        *old |= (ULong)was << (8 * i);
        g[0].equal &= was == (UChar)(value >> (8 * i));
    }
    return 1;
}

/* The frame pointer and r13 at a Java thread's access (exact_on_access_java):
 * its Java frames are read from them. */
static Addr java_fp, java_r13;

static UInt leaf_of(exact_thread *t, Addr pc, UInt len, Addr sp)
{
    return exact_opts.java ? exact_java_leaf(t, pc, len, sp, java_fp, java_r13) : exact_leaf(t, pc, len);
}

/* One access of at most 8 bytes. */
static void access_bytes(exact_thread *t, Addr addr, UInt size, UInt kind, ULong value, Addr pc,
                         UInt len, Addr sp)
{
    Bool known = !(kind & EXACT_UNKNOWN_VALUE);
    kind &= EXACT_LOAD | EXACT_STORE;
    /* In silent-load mode a load marked as a store too is a read-modify-write
     * (exact_instrument.c): it ends pairs, never silently, and starts none. */
    Bool monitored = exact_opts.mode == EXACT_SILENT_LOAD ? kind == EXACT_LOAD : (kind & EXACT_STORE) != 0;
    if (filtered(t, addr, kind, sp))
        return;
    UInt ctx = monitored ? leaf_of(t, pc, len, sp) : 0;
    ULong fresh = monitored ? (ULong)ctx << EXACT_CTX_SHIFT | t->index | (known ? 0 : EXACT_UNKNOWN_BIT) : 0;
    group g[8];
    ULong old = 0;
    if (monitored) {
        t->stats[XS_ACCESSES]++;
        t->stats[XS_CTX_FULL] += ctx == exact_opts.max_ctx;
    }
    chunk *c = chunk_of(addr);
    UInt off = (UInt)(addr & (CHUNK_SIZE - 1)), ng;
    if ((off & 7) + size <= 8 && !(c->granule[off >> 3] & G_SPLIT))
        ng = read_granule(t, c, off, size, value, g, &old);
    else
        ng = read_bytes(t, addr, size, value, g, &old);
    /* Then the new values and state, granule by granule (at most two). */
    for (UInt i = 0; i < size;) {
        Addr a = addr + i;
        c = chunk_of(a);
        off = (UInt)(a & (CHUNK_SIZE - 1));
        UInt b = off & 7, n = 8 - b < size - i ? 8 - b : size - i;
        for (UInt k = 0; c->value && k < n; k++)
            c->value[off + k] = (UChar)(value >> (8 * (i + k)));
        g_set(&c->granule[off >> 3], ((1u << n) - 1) << b, fresh);
        i += n;
    }
    if (!ng)
        return;
    if (!ctx)
        ctx = leaf_of(t, pc, len, sp);
    record(t, g, ng, ctx, size, kind, known, old, value);
}

void exact_on_access(Addr addr, ULong value, ULong info, Addr sp)
{
    exact_thread *t = exact_cur;
    if (!t)
        return;
    access_bytes(t, addr, (UInt)(info >> 48) & 15, (UInt)(info >> 52) & 7, value,
                 info & 0xFFFFFFFFFFFFULL, (UInt)(info >> 55) & 15, sp);
}

/* size bytes at addr, accessed at pc with a value not known, in 8-byte pieces. */
static void access_pieces(exact_thread *t, Addr addr, UInt size, UInt kind, Addr pc, UInt len, Addr sp)
{
    for (UInt done = 0; done < size; done += 8)
        access_bytes(t, addr + done, size - done < 8 ? size - done : 8, kind | EXACT_UNKNOWN_VALUE, 0, pc,
                     len, sp);
}

/* An access whose value the instrumentation cannot pass (dirty helpers:
 * fxsave, cpuid-like effects). */
void exact_on_access_wide(Addr addr, ULong size_kind, ULong pc_len, Addr sp)
{
    if (exact_cur)
        access_pieces(exact_cur, addr, (UInt)size_kind, (UInt)(size_kind >> 32), pc_len & 0xFFFFFFFFFFFFULL,
                      (UInt)(pc_len >> 48) & 15, sp);
}

/* A JVM's threads: only Java threads are watched (as the sampled mode
 * samples only them), with their frame pointer and bytecode register. */
static Bool java_regs(const exact_thread *t, Addr fp, Addr r13)
{
    java_fp = fp;
    java_r13 = r13;
    return t && exact_java_watched(t);
}

void exact_on_access_java(Addr addr, ULong value, ULong info, Addr sp, Addr fp, Addr r13)
{
    if (java_regs(exact_cur, fp, r13))
        exact_on_access(addr, value, info, sp);
}

void exact_on_access_wide_java(Addr addr, ULong size_kind, ULong pc_len, Addr sp, Addr fp, Addr r13)
{
    if (java_regs(exact_cur, fp, r13))
        exact_on_access_wide(addr, size_kind, pc_len, sp);
}

/* A system call read [addr, addr + size) (exact_syscall.c): a load of each
 * byte at pc, the call's site. Chunks the program never touched hold
 * nothing pending and are skipped, not given shadow (write(2) of a mapped
 * file). */
void exact_on_kernel_read(exact_thread *t, Addr addr, SizeT size, Addr pc, Addr sp, Addr fp, Addr r13)
{
    if (exact_opts.java && !java_regs(t, fp, r13))
        return;
    for (Addr a = addr, end = addr + size; a < end;) {
        Addr next_chunk = (a | (CHUNK_SIZE - 1)) + 1, stop = next_chunk && next_chunk < end ? next_chunk : end;
        if (chunk_exists(a))
            access_pieces(t, a, (UInt)(stop - a), EXACT_LOAD, pc, 2, sp);
        a = stop;
    }
}

/* A GC moves objects: no pair spans one (paper §5.3), so nothing stays
 * pending. */
void exact_shadow_clear(void)
{
    for (UInt i1 = 0; i1 < L1_SIZE; i1++)
        for (UInt i2 = 0; l1[i1] && i2 < L2_SIZE; i2++)
            if (l1[i1][i2])
                VG_(memset)(l1[i1][i2]->granule, 0, sizeof l1[i1][i2]->granule);
    pool_used = pool_free = 0;
}

void exact_shadow_init(void)
{
    keep_values = exact_opts.mode != EXACT_DEAD_STORE;
}

/*
 * exact_tables.c - the exact tool's interned tables: call-tree nodes (a
 * caller chain, one node per call site), leaf contexts (a caller chain plus
 * the accessing instruction) and the pair table <thread, C1, C2> -> bytes.
 *
 * Runs on Valgrind's allocator; tables grow by doubling (the tool runs with
 * the program stopped, so growth needs no care for concurrency). Leaf
 * context ids stop at EXACT_MAX_CTX: past that, contexts fold into that one
 * id, which names no leaf (the profile calls it contexts past the table);
 * the accesses that get it are counted (XS_CTX_FULL, exact_shadow.c).
 */
#include "exact.h"

#include "pub_tool_aspacemgr.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_vki.h"

/* Open addressing over two-word keys; values are ids + 1 (0 = free). */
typedef struct xmap {
    ULong *k1, *k2;
    UInt *val;
    UInt cap, used;
} xmap;

static void xmap_init(xmap *m, UInt cap)
{
    m->cap = cap;
    m->used = 0;
    m->k1 = VG_(calloc)("wasp.map", cap, sizeof(ULong));
    m->k2 = VG_(calloc)("wasp.map", cap, sizeof(ULong));
    m->val = VG_(calloc)("wasp.map", cap, sizeof(UInt));
}

static inline UInt xmap_hash(ULong a, ULong b, UInt cap)
{
    ULong h = a * 0x9E3779B97F4A7C15ULL ^ (b + 0x632BE59BD9B4E019ULL) * 0xC2B2AE3D27D4EB4FULL;
    return (UInt)(h >> 29) & (cap - 1);
}

static UInt *xmap_slot(xmap *m, ULong a, ULong b)
{
    UInt i = xmap_hash(a, b, m->cap);
    while (m->val[i] && (m->k1[i] != a || m->k2[i] != b))
        i = (i + 1) & (m->cap - 1);
    m->k1[i] = a;
    m->k2[i] = b;
    return &m->val[i];
}

static void xmap_grow(xmap *m)
{
    xmap old = *m;
    xmap_init(m, old.cap * 2);
    for (UInt i = 0; i < old.cap; i++)
        if (old.val[i])
            *xmap_slot(m, old.k1[i], old.k2[i]) = old.val[i];
    m->used = old.used;
    VG_(free)(old.k1);
    VG_(free)(old.k2);
    VG_(free)(old.val);
}

/* The value slot for (a, b), growing first when half full. */
static UInt *xmap_get(xmap *m, ULong a, ULong b)
{
    if (m->used * 2 >= m->cap)
        xmap_grow(m);
    return xmap_slot(m, a, b);
}

/* ---- call-tree nodes: node 0 is the root (no caller) ---- */

static xmap node_map;
static UInt *node_parent;
static Addr *node_pc;
static UInt *node_epoch;   /* Valgrind's debug-info epoch at capture: names code unloaded since */
static UInt nodes, nodes_cap;

static void *grow_array(void *p, UInt *cap, UInt need, SizeT elem)
{
    if (need < *cap)
        return p;
    while (*cap <= need)
        *cap *= 2;
    return VG_(realloc)("wasp.table", p, (SizeT)*cap * elem);
}

UInt exact_node_child(UInt parent, Addr call_pc)
{
    UInt *slot = xmap_get(&node_map, parent, call_pc);
    if (*slot)
        return *slot - 1;
    UInt cap = nodes_cap;
    node_parent = grow_array(node_parent, &cap, nodes, sizeof(UInt));
    cap = nodes_cap;
    node_pc = grow_array(node_pc, &cap, nodes, sizeof(Addr));
    cap = nodes_cap;
    node_epoch = grow_array(node_epoch, &cap, nodes, sizeof(UInt));
    nodes_cap = cap;
    node_parent[nodes] = parent;
    node_pc[nodes] = call_pc;
    node_epoch[nodes] = VG_(current_DiEpoch)().n;
    node_map.used++;
    *slot = ++nodes;
    return nodes - 1;
}

void exact_node_info(UInt node, UInt *parent, Addr *call_pc)
{
    *parent = node_parent[node];
    *call_pc = node_pc[node];
}

UInt exact_node_epoch(UInt node)
{
    return node_epoch[node];
}

UInt exact_nnodes(void) { return nodes; }

/* ---- leaf contexts: ids 1..EXACT_MAX_CTX-1 (0 marks a free shadow byte) ---- */

static xmap leaf_map;
static UInt *leaf_node;
static Addr *leaf_pc;
static UInt *leaf_epoch;
static UChar *leaf_len;
static UChar (*leaf_bytes)[16];       /* read when first seen: JIT code may be gone by exit */
static UInt leaves = 1, leaves_cap;   /* id 0 unused */

/* The leaf below node keyed by key, which is its pc but for leaves that
 * stand for many instructions (exact_leaf_keyed); pc is the one shown. */
static UInt leaf_intern(UInt node, Addr key, Addr pc, UInt len)
{
    UInt *slot = xmap_get(&leaf_map, node, key);
    if (*slot)
        return *slot - 1;
    if (leaves >= exact_opts.max_ctx) {
        *slot = exact_opts.max_ctx + 1;
        leaf_map.used++;
        return exact_opts.max_ctx;
    }
    UInt cap = leaves_cap;
    leaf_node = grow_array(leaf_node, &cap, leaves, sizeof(UInt));
    cap = leaves_cap;
    leaf_pc = grow_array(leaf_pc, &cap, leaves, sizeof(Addr));
    cap = leaves_cap;
    leaf_epoch = grow_array(leaf_epoch, &cap, leaves, sizeof(UInt));
    cap = leaves_cap;
    leaf_len = grow_array(leaf_len, &cap, leaves, 1);
    cap = leaves_cap;
    leaf_bytes = grow_array(leaf_bytes, &cap, leaves, sizeof(*leaf_bytes));
    leaves_cap = cap;
    len = len > 16 ? 16 : len;
    if (len && VG_(am_is_valid_for_client)(pc, len, VKI_PROT_READ))
        VG_(memcpy)(leaf_bytes[leaves], (const void *)pc, len);
    else
        len = 0;
    leaf_node[leaves] = node;
    leaf_pc[leaves] = pc;
    leaf_epoch[leaves] = VG_(current_DiEpoch)().n;
    leaf_len[leaves] = (UChar)len;
    leaf_map.used++;
    *slot = ++leaves;
    return leaves - 1;
}

UInt exact_leaf(exact_thread *t, Addr pc, UInt len)
{
    UInt h = (UInt)((pc ^ (pc >> 7) ^ ((Addr)t->cur * 0x9E37u)) & 255);
    if (t->leaf_cache[h].pc == pc && t->leaf_cache[h].node == t->cur && t->leaf_cache[h].ctx)
        return t->leaf_cache[h].ctx;
    UInt ctx = leaf_intern(t->cur, pc, pc, len);
    t->leaf_cache[h].pc = pc;
    t->leaf_cache[h].node = t->cur;
    t->leaf_cache[h].ctx = ctx;
    return ctx;
}

UInt exact_leaf_at(UInt node, Addr pc, UInt len)
{
    return leaf_intern(node, pc, pc, len);
}

UInt exact_leaf_keyed(UInt node, Addr key, Addr pc, UInt len)
{
    return leaf_intern(node, key, pc, len);
}

/* The leaf keeps its id (pairs name it) but hangs below another node; its
 * (node, pc) key goes stale, so only once no new access can look it up. */
void exact_leaf_set_node(UInt ctx, UInt node)
{
    leaf_node[ctx] = node;
}

const UChar *exact_leaf_bytes(UInt ctx)
{
    return leaf_bytes[ctx];
}

void exact_leaf_info(UInt ctx, UInt *node, Addr *pc, UInt *len)
{
    *node = leaf_node[ctx];
    *pc = leaf_pc[ctx];
    *len = leaf_len[ctx];
}

UInt exact_leaf_epoch(UInt ctx)
{
    return leaf_epoch[ctx];
}

UInt exact_nleaves(void) { return leaves; }

/* ---- Java frames (exact_java.c): ids from 0 ---- */

static xmap jframe_map;
static struct { ULong method, bci; UInt kind; } *jframe_key;
static UInt jframes, jframes_cap;

UInt exact_jframe(ULong method, ULong bci, UInt kind)
{
    /* Interpreted frames' bcps and jmethodIDs' bcis never meet: bit 63. */
    UInt *slot = xmap_get(&jframe_map, method, bci ^ ((ULong)kind << 63));
    if (*slot)
        return *slot - 1;
    UInt cap = jframes_cap;
    jframe_key = grow_array(jframe_key, &cap, jframes, sizeof(*jframe_key));
    jframes_cap = cap;
    jframe_key[jframes].method = method;
    jframe_key[jframes].bci = bci;
    jframe_key[jframes].kind = kind;
    jframe_map.used++;
    *slot = ++jframes;
    return jframes - 1;
}

void exact_jframe_info(UInt id, ULong *method, ULong *bci, UInt *kind)
{
    *method = jframe_key[id].method;
    *bci = jframe_key[id].bci;
    *kind = jframe_key[id].kind;
}

UInt exact_njframes(void) { return jframes; }

/* ---- pairs ---- */

static exact_pair *pairs;
static UInt pairs_cap, pairs_used;

static UInt pair_hash(const exact_pair *p, UInt cap)
{
    ULong key = (ULong)p->c1 << 32 ^ p->c2 ^ (ULong)p->tindex << 53;
    return (UInt)((key * 0x9E3779B97F4A7C15ULL) >> 29) & (cap - 1);
}

static Bool same_pair(const exact_pair *a, const exact_pair *b)
{
    return a->c1 == b->c1 && a->c2 == b->c2 && a->tindex == b->tindex;
}

static void pairs_grow(void)
{
    exact_pair *old = pairs;
    UInt old_cap = pairs_cap;
    pairs_cap *= 2;
    pairs = VG_(calloc)("wasp.pairs", pairs_cap, sizeof(exact_pair));
    for (UInt i = 0; i < old_cap; i++) {
        if (!old[i].c1)
            continue;
        UInt j = pair_hash(&old[i], pairs_cap);
        while (pairs[j].c1)
            j = (j + 1) & (pairs_cap - 1);
        pairs[j] = old[i];
    }
    VG_(free)(old);
}

void exact_pair_add(UInt tindex, UInt c1, UInt c2, UInt bytes, UInt wasteful, UInt a64, UInt a32)
{
    exact_pair key = { .tindex = tindex, .c1 = c1, .c2 = c2 };
    if (pairs_used * 2 >= pairs_cap)
        pairs_grow();
    UInt j = pair_hash(&key, pairs_cap);
    while (pairs[j].c1 && !same_pair(&pairs[j], &key))
        j = (j + 1) & (pairs_cap - 1);
    if (!pairs[j].c1) {
        pairs[j] = key;
        pairs_used++;
    }
    pairs[j].count++;
    pairs[j].bytes += bytes;
    pairs[j].wasteful += wasteful;
    pairs[j].approx64 += a64;
    pairs[j].approx32 += a32;
}

UInt exact_npairs_cap(void) { return pairs_cap; }

const exact_pair *exact_pair_at(UInt slot)
{
    return pairs[slot].c1 ? &pairs[slot] : NULL;
}

/* A forked child starts with none of its parent's pairs: those are the
 * parent's to report. Contexts stay (the child shares the code). */
void exact_tables_reset_pairs(void)
{
    VG_(memset)(pairs, 0, (SizeT)pairs_cap * sizeof(exact_pair));
    pairs_used = 0;
}

void exact_tables_init(void)
{
    xmap_init(&node_map, 1024);
    xmap_init(&leaf_map, 4096);
    nodes_cap = leaves_cap = 1024;
    node_parent = VG_(malloc)("wasp.table", nodes_cap * sizeof(UInt));
    node_pc = VG_(malloc)("wasp.table", nodes_cap * sizeof(Addr));
    node_epoch = VG_(malloc)("wasp.table", nodes_cap * sizeof(UInt));
    leaf_node = VG_(malloc)("wasp.table", leaves_cap * sizeof(UInt));
    leaf_pc = VG_(malloc)("wasp.table", leaves_cap * sizeof(Addr));
    leaf_epoch = VG_(malloc)("wasp.table", leaves_cap * sizeof(UInt));
    leaf_len = VG_(malloc)("wasp.table", leaves_cap);
    leaf_bytes = VG_(malloc)("wasp.table", leaves_cap * sizeof(*leaf_bytes));
    xmap_init(&jframe_map, 1024);
    jframes_cap = 1024;
    jframe_key = VG_(malloc)("wasp.table", jframes_cap * sizeof(*jframe_key));
    node_parent[0] = 0;
    node_pc[0] = 0;
    node_epoch[0] = 0;
    nodes = 1;
    pairs_cap = 4096;
    pairs = VG_(calloc)("wasp.pairs", pairs_cap, sizeof(exact_pair));
}

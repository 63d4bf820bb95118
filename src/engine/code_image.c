/*
 * code_image.c - a function's instructions decoded once and kept
 * (code_image.h says why).
 *
 * Signal context, except code_image_init.
 */
#include "code_image.h"
#include "decode_internal.h"

#include <string.h>
#include <sys/mman.h>

/* Address space of the arena; pages are touched as images fill them (4
 * bytes an instruction: runs of CPython, SQLite and Rhino at 1 ms filled
 * 70-134 KB). Kept small: a program under RLIMIT_AS pays for it. */
#define ARENA_BYTES (16ull << 20)
#define IMAGE_SLOTS 16384u     /* functions with an image, at most */
#define IMAGE_PROBES 32u
#define CHECK_BYTES 32u        /* a function's first bytes, hashed */
#define MARK_EVERY 64u         /* entries between marks (seeking a window) */

/* An entry: bits 0..3 the length, 4..10 the category, 11 set for a
 * relative branch, 12..31 its displacement. A displacement beyond 20 bits
 * is clamped: such a target lies far outside the function (at most
 * DECODE_SWEEP_MAX bytes), on the same side, and a sweep only compares
 * targets with pcs inside it. */
#define E_LEN_MASK 0xFu
#define E_CAT_SHIFT 4
#define E_CAT_MASK 0x7Fu
#define E_REL (1u << 11)
#define E_DISP_SHIFT 12
#define E_DISP_MAX ((1 << 19) - 1)

_Static_assert(ZYDIS_CATEGORY_MAX_VALUE <= E_CAT_MASK, "an instruction category fits in 7 bits");

/* The entries, then one mark every MARK_EVERY entries: the offset from
 * start of entry k * MARK_EVERY (the last may be where the entries end). */
struct code_image {
    uint64_t start, end;   /* the code, as its bounds gave it */
    uint64_t check;        /* its identity and a hash of its first bytes */
    uint32_t count;        /* entries: instructions from start on */
    uint32_t nmarks;
    uint32_t insn[];
};

static char *arena;
static uint64_t arena_used;    /* bytes handed out, atomically */
static uint64_t image_slots[IMAGE_SLOTS];   /* arena offset / 8 + 1; 0 empty */

int code_image_init(void)
{
    if (__atomic_load_n(&arena, __ATOMIC_ACQUIRE))
        return 0;
    void *p = mmap(NULL, ARENA_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    __atomic_store_n(&arena, (char *)p, __ATOMIC_RELEASE);
    return 0;
}

uint64_t code_image_bytes(void)
{
    uint64_t used = __atomic_load_n(&arena_used, __ATOMIC_RELAXED);
    return used < ARENA_BYTES ? used : ARENA_BYTES;
}

/* FNV-1a over the code's identity and first bytes: the image is of these. */
static uint64_t code_check(uint64_t start, uint64_t end, uint64_t id)
{
    uint64_t h = (0xcbf29ce484222325ull ^ id) * 0x100000001b3ull, n = end - start < CHECK_BYTES ? end - start : CHECK_BYTES;
    const unsigned char *p = (const unsigned char *)(uintptr_t)start;
    for (uint64_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static size_t slot_hash(uint64_t start)
{
    return (size_t)((start * 0x9E3779B97F4A7C15ull) >> 50) & (IMAGE_SLOTS - 1);
}

static uint32_t *marks_of(const code_image *img)
{
    return (uint32_t *)(void *)((char *)(uintptr_t)img + sizeof(code_image) + 4 * (uint64_t)img->count);
}

/* Bytes an image of count entries takes, 8-aligned. */
static uint64_t image_bytes(uint64_t count)
{
    return (sizeof(code_image) + 4 * count + 4 * (count / MARK_EVERY + 1) + 7) & ~7ull;
}

static const code_image *image_in(uint64_t slot)
{
    return (const code_image *)(const void *)(arena + ((slot - 1) << 3));
}

static int image_is(const code_image *img, uint64_t start, uint64_t end, uint64_t check)
{
    return img->start == start && img->end == end && img->check == check;
}

static uint32_t entry_of(const ZydisDecodedInstruction *in)
{
    uint32_t e = in->length | (uint32_t)in->meta.category << E_CAT_SHIFT;
    if (in->raw.imm[0].is_relative) {
        int64_t d = in->raw.imm[0].value.s;
        d = d > E_DISP_MAX ? E_DISP_MAX : d < -E_DISP_MAX ? -E_DISP_MAX : d;
        e |= E_REL | (uint32_t)d << E_DISP_SHIFT;
    }
    return e;
}

/* Decodes [start, limit) into img, as a sweep would (each instruction
 * given at most up to end): stops at the first that does not decode.
 * Then the marks, after the entries. */
static void fill(code_image *img, uint64_t start, uint64_t end, uint64_t limit)
{
    uint64_t pc = start;
    uint32_t n = 0, k = 0;
    while (pc < limit) {
        ZydisDecodedInstruction in;
        if (!decode_insn_within(pc, end, &in))
            break;
        img->insn[n++] = entry_of(&in);
        pc += in.length;
    }
    img->count = n;
    img->nmarks = n / MARK_EVERY + 1;
    uint32_t *marks = marks_of(img);
    for (uint32_t i = 0, off = 0; i < n; off += img->insn[i++] & E_LEN_MASK)
        if (i % MARK_EVERY == 0)
            marks[k++] = (uint32_t)off;
    if (n % MARK_EVERY == 0)
        marks[k] = (uint32_t)(pc - start);   /* where entry n would be: the end */
}

/* Space for a new image, worst case one instruction a byte; the unused
 * tail goes back when no one took space after it (give_back). */
static code_image *reserve(uint64_t bytes, uint64_t *off)
{
    *off = __atomic_fetch_add(&arena_used, bytes, __ATOMIC_RELAXED);
    if (*off + bytes > ARENA_BYTES) {
        uint64_t want = *off + bytes;
        __atomic_compare_exchange_n(&arena_used, &want, *off, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
        return NULL;
    }
    return (code_image *)(void *)(arena + *off);
}

static void give_back(uint64_t off, uint64_t reserved, uint64_t used)
{
    uint64_t want = off + reserved;
    __atomic_compare_exchange_n(&arena_used, &want, off + used, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* Publishes img (at arena offset off) in the first empty slot of its
 * chain, or returns the equal image another thread published first. */
static const code_image *publish(const code_image *img, uint64_t off)
{
    size_t h = slot_hash(img->start);
    uint64_t mine = (off >> 3) + 1;
    for (unsigned i = 0; i < IMAGE_PROBES; i++) {
        uint64_t *slot = &image_slots[(h + i) & (IMAGE_SLOTS - 1)], cur = 0;
        if (__atomic_compare_exchange_n(slot, &cur, mine, 0, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
            return img;
        if (image_is(image_in(cur), img->start, img->end, img->check))
            return image_in(cur);
    }
    return NULL;   /* the chain is full: this image is not kept */
}

static const code_image *lookup(uint64_t start, uint64_t end, uint64_t check)
{
    size_t h = slot_hash(start);
    for (unsigned i = 0; i < IMAGE_PROBES; i++) {
        uint64_t slot = __atomic_load_n(&image_slots[(h + i) & (IMAGE_SLOTS - 1)], __ATOMIC_ACQUIRE);
        if (!slot)
            return NULL;
        if (image_is(image_in(slot), start, end, check))
            return image_in(slot);
    }
    return NULL;
}

const code_image *code_image_of(uint64_t start, uint64_t end, uint64_t id)
{
    if (!id || !__atomic_load_n(&arena, __ATOMIC_ACQUIRE) || end <= start)
        return NULL;
    uint64_t check = code_check(start, end, id), off;
    uint64_t limit = end - start > DECODE_SWEEP_MAX ? start + DECODE_SWEEP_MAX : end;
    const code_image *found = lookup(start, end, check);
    if (found)
        return found;
    uint64_t reserved = image_bytes(limit - start);
    code_image *img = reserve(reserved, &off);
    if (!img)
        return NULL;
    img->start = start;
    img->end = end;
    img->check = check;
    fill(img, start, end, limit);
    give_back(off, reserved, image_bytes(img->count));
    return publish(img, off);
}

void code_image_cursor_init(code_image_cursor *c, const code_image *img, uint64_t pc)
{
    c->img = img;
    c->i = 0;
    c->at = img ? img->start : 0;
    if (!img || pc <= img->start)
        return;
    const uint32_t *marks = marks_of(img);
    uint32_t lo = 0, hi = img->nmarks;   /* the last mark at or before pc */
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (img->start + marks[mid] <= pc)
            lo = mid;
        else
            hi = mid;
    }
    c->i = lo * MARK_EVERY;
    c->at = img->start + marks[lo];
}

int code_image_at(code_image_cursor *c, uint64_t pc, uint64_t end, ZydisDecodedInstruction *in)
{
    const code_image *img = c->img;
    if (!img || pc < c->at)
        return 0;
    while (c->at < pc && c->i < img->count)
        c->at += img->insn[c->i++] & E_LEN_MASK;
    if (c->at != pc || c->i >= img->count || pc + (img->insn[c->i] & E_LEN_MASK) > end)
        return 0;
    uint32_t e = img->insn[c->i];
    in->length = (ZyanU8)(e & E_LEN_MASK);
    in->meta.category = (ZydisInstructionCategory)((e >> E_CAT_SHIFT) & E_CAT_MASK);
    in->raw.imm[0].is_relative = (e & E_REL) != 0;
    in->raw.imm[0].value.s = (e & E_REL) ? (int32_t)e >> E_DISP_SHIFT : 0;
    return 1;
}

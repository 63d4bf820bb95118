/*
 * codemap.c - a lock-free map from pc to the JVM code blob holding it.
 *
 * Every 4 KiB page a blob touches gets a link to it in a per-page chain; the
 * page -> chain head table is open addressing with keys written once. A new
 * blob is linked at the head, so after code cache reuse the newest code is
 * found first and dead entries are skipped. All storage is mmap'd up front
 * (touched lazily) so that readers in signal handlers never see it move.
 */
#include "codemap.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PAGE_SHIFT 12
#define MAX_BLOBS (1u << 20)
#define MAX_LINKS (1u << 22)
#define PAGE_SLOTS (1u << 20)

typedef struct page_link {
    uint32_t blob;
    uint32_t next;   /* 0 ends the chain; link 0 is never used */
} page_link;

typedef struct page_slot {
    uint64_t page;   /* page number + 1; 0 is empty */
    uint32_t head;
} page_slot;

static struct {
    pthread_mutex_t lock;
    code_blob *blobs;
    page_link *links;
    page_slot *pages;
    uint32_t nblobs, nlinks;
    uint64_t refused;
} map = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void *map_array(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int codemap_init(void)
{
    map.blobs = map_array(sizeof(code_blob) * MAX_BLOBS);
    map.links = map_array(sizeof(page_link) * MAX_LINKS);
    map.pages = map_array(sizeof(page_slot) * PAGE_SLOTS);
    map.nlinks = 1;
    return map.blobs && map.links && map.pages ? 0 : -1;
}

/* Neighbouring code pages land in neighbouring slots (groups of 64), so the
 * table's memory grows with the code cache's span, not one table page per
 * code page (measured: 4 MiB for Rhino when slots were scattered). */
static uint32_t page_hash(uint64_t page)
{
    uint64_t group = (page >> 6) * 0x9E3779B97F4A7C15ULL;
    return (uint32_t)(((group >> 44) << 6) | (page & 63)) & (PAGE_SLOTS - 1);
}

/* Writer side: the slot for page, created if absent (NULL when full). */
static page_slot *page_slot_for(uint64_t page, int create)
{
    for (uint32_t i = page_hash(page), n = 0; n < 64; i = (i + 1) & (PAGE_SLOTS - 1), n++) {
        page_slot *s = &map.pages[i];
        uint64_t key = __atomic_load_n(&s->page, __ATOMIC_ACQUIRE);
        if (key == page + 1)
            return s;
        if (key == 0) {
            if (!create)
                return NULL;
            __atomic_store_n(&s->page, page + 1, __ATOMIC_RELEASE);
            return s;
        }
    }
    return NULL;
}

static void link_page(uint64_t page, uint32_t blob)
{
    page_slot *s = page_slot_for(page, 1);
    if (!s || map.nlinks >= MAX_LINKS) {
        map.refused++;
        return;
    }
    uint32_t l = map.nlinks++;
    map.links[l].blob = blob;
    map.links[l].next = s->head;
    __atomic_store_n(&s->head, l, __ATOMIC_RELEASE);
}

int codemap_add(uint64_t start, uint64_t end, enum code_kind kind, uint64_t method, const char *name,
                code_scope *scopes, uint32_t nscopes)
{
    if (!map.blobs || end <= start) {
        free(scopes);
        return -1;
    }
    pthread_mutex_lock(&map.lock);
    if (map.nblobs + 1 >= MAX_BLOBS) {
        map.refused++;
        pthread_mutex_unlock(&map.lock);
        free(scopes);
        return -1;
    }
    uint32_t b = map.nblobs + 1;   /* blob 0 stays unused */
    map.blobs[b] = (code_blob){ .start = start, .end = end, .kind = (uint8_t)kind, .method = method,
                                .name = name ? strdup(name) : NULL, .scopes = scopes,
                                .nscopes = nscopes };
    __atomic_store_n(&map.nblobs, b, __ATOMIC_RELEASE);
    for (uint64_t p = start >> PAGE_SHIFT; p <= (end - 1) >> PAGE_SHIFT; p++)
        link_page(p, b);
    pthread_mutex_unlock(&map.lock);
    return 0;
}

void codemap_remove(uint64_t start, uint64_t method)
{
    pthread_mutex_lock(&map.lock);
    page_slot *s = map.blobs ? page_slot_for(start >> PAGE_SHIFT, 0) : NULL;
    for (uint32_t l = s ? s->head : 0; l; l = map.links[l].next) {
        code_blob *b = &map.blobs[map.links[l].blob];
        if (b->start == start && b->method == method && !b->dead) {
            /* The JVM reports an unload before it reuses the memory. */
            if (b->wanted && !b->saved && (b->saved = malloc(b->end - b->start)))
                memcpy(b->saved, (const void *)(uintptr_t)b->start, b->end - b->start);
            __atomic_store_n(&b->dead, 1, __ATOMIC_RELEASE);   /* after saved: copy_code reads them in that order */
            break;
        }
    }
    pthread_mutex_unlock(&map.lock);
}

/* The id of the first live blob containing pc in its page's chain (newest
 * first), 0 when none. */
static uint32_t find_blob(uint64_t pc)
{
    if (!map.pages)
        return 0;
    uint64_t page = pc >> PAGE_SHIFT;
    for (uint32_t i = page_hash(page), n = 0; n < 64; i = (i + 1) & (PAGE_SLOTS - 1), n++) {
        const page_slot *s = &map.pages[i];
        uint64_t key = __atomic_load_n(&s->page, __ATOMIC_ACQUIRE);
        if (key == 0)
            return 0;
        if (key != page + 1)
            continue;
        for (uint32_t l = __atomic_load_n(&s->head, __ATOMIC_ACQUIRE); l; l = map.links[l].next) {
            const code_blob *b = &map.blobs[map.links[l].blob];
            if (!b->dead && b->start <= pc && pc < b->end)
                return map.links[l].blob;
        }
        return 0;
    }
    return 0;
}

const code_blob *codemap_find(uint64_t pc)
{
    uint32_t id = find_blob(pc);
    return id ? &map.blobs[id] : NULL;
}

const code_blob *codemap_blob(uint32_t id)
{
    return id && id <= __atomic_load_n(&map.nblobs, __ATOMIC_ACQUIRE) ? &map.blobs[id] : NULL;
}

uint32_t codemap_mark_wanted(uint64_t pc)
{
    uint32_t id = find_blob(pc);
    code_blob *b = id ? &map.blobs[id] : NULL;
    if (b && b->kind == CODE_JIT && !b->wanted)
        __atomic_store_n(&b->wanted, 1, __ATOMIC_RELAXED);
    return id;
}

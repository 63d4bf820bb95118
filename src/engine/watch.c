/*
 * watch.c - slot bookkeeping and reservoir replacement (paper §5.2).
 *
 * Runs in signal context: no allocation, no system calls.
 */
#include "watch.h"

#include <string.h>

void watch_init(watch_set *w, int nslots, uint64_t seed)
{
    memset(w, 0, sizeof(*w));
    w->nslots = nslots;
    w->rng = seed ? seed : 0x2545F4914F6CDD1DULL;
}

uint64_t watch_random(watch_set *w)
{
    uint64_t x = w->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    w->rng = x;
    return x;
}

static void shuffle_order(watch_set *w, int *order)
{
    for (int i = 0; i < w->nslots; i++)
        order[i] = i;
    for (int i = w->nslots - 1; i > 0; i--) {
        int j = (int)(watch_random(w) % (uint64_t)(i + 1));
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

int watch_pick(watch_set *w)
{
    return watch_pick_within(w, w->nslots);
}

int watch_pick_within(watch_set *w, int max_armed)
{
    int order[OPTIONS_MAX_SLOTS];
    int chosen = -1, armed = 0;

    if (max_armed <= 0 || max_armed > w->nslots)
        max_armed = w->nslots;
    for (int i = 0; i < w->nslots; i++)
        armed += w->slot[i].armed != 0;
    for (int i = 0; i < w->nslots && armed < max_armed; i++) {
        if (!w->slot[i].armed) {
            chosen = i;
            break;
        }
    }
    /* A free slot takes the sample; the armed ones still count it, so their
     * survival odds shrink exactly as if they had been offered it. */
    for (int i = 0; i < w->nslots; i++)
        if (w->slot[i].armed)
            w->slot[i].seen++;
    if (chosen >= 0) {
        w->slot[chosen].seen = 1;
        return chosen;
    }
    shuffle_order(w, order);
    for (int k = 0; k < w->nslots; k++) {
        watch_slot *s = &w->slot[order[k]];
        if (s->armed && !s->guard && watch_random(w) % s->seen == 0)
            return order[k];
    }
    return -1;
}

int watch_free_slot(const watch_set *w, int not)
{
    for (int i = 0; i < w->nslots; i++)
        if (i != not && !w->slot[i].armed)
            return i;
    return -1;
}

void watch_release(watch_set *w, int i)
{
    w->slot[i].armed = 0;
    w->slot[i].priming = 0;
    w->slot[i].code = 0;
    w->slot[i].guard = 0;
    w->slot[i].partner = 0;
    w->slot[i].seen = 0;
}

int watch_fit(uint64_t addr, uint32_t size, uint64_t *waddr, uint32_t *wlen)
{
    for (uint32_t len = 8; len >= 1; len /= 2) {
        uint64_t a = (addr + len - 1) & ~(uint64_t)(len - 1);
        if (a + len <= addr + size) {
            *waddr = a;
            *wlen = len;
            return 0;
        }
    }
    return -1;
}

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

/* The chance that armed slot `me` of the replaceable ones (mask) is the one
 * a sample replaces: it accepts (q = 1/seen) and every slot visited before
 * it declines; each subset of the others comes first with probability
 * |S|! (m-1-|S|)! / m! in a random order. */
static double replace_chance(const watch_set *w, unsigned mask, int me)
{
    static const double fact[OPTIONS_MAX_SLOTS + 1] = { 1, 1, 2, 6, 24 };
    int others[OPTIONS_MAX_SLOTS], m = 0;
    for (int i = 0; i < w->nslots; i++)
        if (i != me && (mask >> i) & 1)
            others[m++] = i;
    double sum = 0;
    for (unsigned sub = 0; sub < 1u << m; sub++) {
        double p = 1;
        int k = 0;
        for (int j = 0; j < m; j++)
            if ((sub >> j) & 1) {
                p *= 1.0 - 1.0 / (double)w->slot[others[j]].seen;
                k++;
            }
        sum += p * fact[k] * fact[m - k] / fact[m + 1];
    }
    return sum / (double)w->slot[me].seen;
}

/* A sample no free slot takes puts every replaceable watch at risk: each
 * that survives it (all but the one replaced, if any) divides its weight by
 * its chance of surviving; the new watch starts at 1 / the chance that any
 * slot took the sample. */
static void weigh_risk(watch_set *w, unsigned mask)
{
    double none = 1, survive[OPTIONS_MAX_SLOTS];
    for (int i = 0; i < w->nslots; i++)
        if ((mask >> i) & 1) {
            none *= 1.0 - 1.0 / (double)w->slot[i].seen;
            survive[i] = 1.0 - replace_chance(w, mask, i);
        }
    for (int i = 0; i < w->nslots; i++)
        if ((mask >> i) & 1 && survive[i] > 0)
            w->slot[i].weight /= survive[i];
    w->pick_weight = none < 1 ? 1.0 / (1.0 - none) : 1;
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
        w->pick_weight = 1;
        return chosen;
    }
    unsigned mask = 0;
    for (int i = 0; i < w->nslots; i++)
        if (w->slot[i].armed && !w->slot[i].guard)
            mask |= 1u << i;
    weigh_risk(w, mask);
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

int watch_fit(uint64_t addr, uint32_t size, uint64_t draw, uint64_t *waddr, uint32_t *wlen)
{
    for (uint32_t len = 8; len >= 1; len /= 2) {
        uint64_t first = (addr + len - 1) & ~(uint64_t)(len - 1);
        if (first + len <= addr + size) {
            uint64_t blocks = (addr + size - first) / len;
            *waddr = first + (draw % blocks) * len;
            *wlen = len;
            return 0;
        }
    }
    return -1;
}

uint8_t watch_touched(const watch_slot *s, uint64_t addr, uint64_t size)
{
    uint64_t lo = addr > s->addr ? addr : s->addr;
    uint64_t end = addr + size, wend = s->addr + s->len, hi = end < wend ? end : wend;
    if (hi <= lo)
        return 0;
    return (uint8_t)(watch_bytes_mask((uint32_t)(hi - s->addr)) & ~watch_bytes_mask((uint32_t)(lo - s->addr)));
}

void watch_narrow(watch_slot *s)
{
    if (!s->pending)
        return;
    int first = __builtin_ctz(s->pending), last = 31 - __builtin_clz(s->pending);
    uint32_t len = 1;
    /* s->addr is aligned to s->len, so blocks aligned within the watch
     * are aligned in memory too. */
    while (len < s->len && first / (int)len != last / (int)len)
        len *= 2;
    if (len >= s->len)
        return;
    uint32_t off = (uint32_t)first / len * len;
    s->addr += off;
    s->len = len;
    s->pending = (uint8_t)((s->pending >> off) & watch_bytes_mask(len));
    s->value = (s->value >> (8 * off)) & ((1ull << (8 * len)) - 1);   /* len <= 4 here */
}

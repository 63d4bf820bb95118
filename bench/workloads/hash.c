/*
 * hash.c - pointer-chasing / hash-table kernel: an open-addressing hash table
 * larger than the last-level cache, driven by random inserts, lookups and
 * counter updates, then a random linked-list walk. Latency-bound, with many
 * silent stores (re-inserting an existing key rewrites the same value).
 * Usage: hash [rounds]   (default sized for ~1.5 s uninstrumented)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "bench.h"

#define SLOTS (1u << 22)          /* 4 Mi slots x 16 B = 64 MiB */
#define KEYS  (SLOTS / 2)         /* 50% load factor */
#define NODES (1u << 21)

typedef struct { uint64_t key, count; } slot;
typedef struct node { struct node *next; uint64_t pad[7]; } node;  /* one cache line */

static uint64_t rng = 88172645463325252ULL;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint64_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return k;
}

static slot *table;

static void bump(uint64_t key)
{
    uint64_t i = mix(key) & (SLOTS - 1);
    while (table[i].key && table[i].key != key)
        i = (i + 1) & (SLOTS - 1);
    table[i].key = key;   /* silent when the key was already there */
    table[i].count++;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    table = calloc(SLOTS, sizeof(slot));
    node *nodes = malloc(NODES * sizeof(node));
    uint32_t *perm = malloc(NODES * sizeof(uint32_t));
    if (!table || !nodes || !perm)
        return 1;
    /* A random cyclic permutation for the list walk. */
    for (uint32_t i = 0; i < NODES; i++)
        perm[i] = i;
    for (uint32_t i = NODES - 1; i > 0; i--) {
        uint32_t j = (uint32_t)(next_rand() % (i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (uint32_t i = 0; i < NODES; i++)
        nodes[perm[i]].next = &nodes[perm[(i + 1) % NODES]];

    uint64_t total = 0;
    for (int r = 0; r < rounds; r++) {
        for (uint32_t i = 0; i < KEYS / 2; i++)
            bump(1 + next_rand() % KEYS);
        node *p = &nodes[perm[0]];
        for (uint32_t i = 0; i < NODES; i++) {
            p->pad[0]++;
            p = p->next;
        }
        total += (uint64_t)(uintptr_t)p & 0xff;
    }
    for (uint32_t i = 0; i < SLOTS; i += 1024)
        total += table[i].count;
    printf("hash %d rounds: checksum %llu\n", rounds, (unsigned long long)total);
    free(table);
    free(nodes);
    free(perm);
    bench_main_done();
    return 0;
}

/*
 * many_contexts.c - stores under a quarter of a million calling contexts
 * (wasp e2e test of the tables' growth).
 *
 * Usage: many_contexts SECONDS
 * Each round picks 18 random bits and descends 18 calls deep through a()
 * and b(), one for each bit, to a leaf that stores 256 times: every round
 * runs under one of 2^18 calling contexts (a tree of 2^19 nodes), so a
 * thread sampled every 100 us fills a 64 Ki-node context tree within a
 * second or two. The calls are not tail calls (a compiler barrier after
 * each), so every level keeps its frame.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define DEPTH 18

static volatile int sink[64];

__attribute__((noinline)) static void leaf(unsigned bits)
{
    for (int k = 0; k < 256; k++)
        sink[k & 63] = (int)bits + k;
}

__attribute__((noinline)) static void a(unsigned bits, int depth);
__attribute__((noinline)) static void b(unsigned bits, int depth);

static inline void descend(unsigned bits, int depth)
{
    if (depth == 0)
        leaf(bits);
    else if (bits & 1)
        a(bits >> 1, depth - 1);
    else
        b(bits >> 1, depth - 1);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void a(unsigned bits, int depth) { descend(bits, depth); }
__attribute__((noinline)) static void b(unsigned bits, int depth) { descend(bits, depth); }

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 4;
    struct timespec t0, now;
    unsigned x = 12345;
    long rounds = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        for (int i = 0; i < 1000; i++, rounds++) {
            x = x * 1103515245u + 12345u;
            descend(x >> 8, DEPTH);
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9 < secs);
    printf("many_contexts: %ld rounds\n", rounds);
    return 0;
}

/*
 * mt.c - multi-threaded kernel: 2 worker threads (this VM has 2 cores), each
 * filling and updating its own histogram and a private array, i.e. a mix of
 * streaming stores and random read-modify-writes. Every thread is sampled on
 * its own CPU-time clock, so this checks that overhead stays per thread.
 * Usage: mt [rounds]   (default sized for ~1.5 s uninstrumented per thread)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "bench.h"

#define THREADS 2
#define LEN (2u << 20)      /* 2 Mi uint32 = 8 MiB per thread */
#define BINS (1u << 16)

typedef struct { int rounds; uint64_t result; } work;

static void *worker(void *arg)
{
    work *w = arg;
    uint32_t *data = malloc(LEN * sizeof(uint32_t));
    uint32_t *hist = calloc(BINS, sizeof(uint32_t));
    uint64_t x = 0x9E3779B97F4A7C15ULL ^ (uint64_t)(uintptr_t)w;
    if (!data || !hist)
        return NULL;
    for (int r = 0; r < w->rounds; r++) {
        for (uint32_t i = 0; i < LEN; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            data[i] = (uint32_t)(x >> 33);
        }
        for (uint32_t i = 0; i < LEN; i++)
            hist[data[i] & (BINS - 1)]++;
        for (uint32_t i = 1; i < LEN; i++)
            data[i] = data[i] > data[i - 1] ? data[i] : data[i - 1] >> 1;
    }
    for (uint32_t i = 0; i < BINS; i++)
        w->result += hist[i] * (uint64_t)i;
    w->result += data[LEN - 1];
    free(data);
    free(hist);
    return NULL;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    pthread_t tid[THREADS];
    work w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i].rounds = rounds;
        w[i].result = 0;
        if (pthread_create(&tid[i], NULL, worker, &w[i]))
            return 1;
    }
    uint64_t total = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(tid[i], NULL);
        total += w[i].result;
    }
    printf("mt %d threads x %d rounds: checksum %llu\n", THREADS, rounds, (unsigned long long)total);
    bench_main_done();
    return 0;
}

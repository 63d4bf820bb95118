/*
 * stream.c - memory-streaming kernel (STREAM-like copy/scale/add/triad over
 * arrays far larger than the caches). Bound by memory bandwidth; mostly
 * plain loads and stores, the bread and butter of wasp's sampler.
 * Usage: stream [passes]   (default sized for ~1.5 s uninstrumented)
 */
#include <stdio.h>
#include <stdlib.h>
#include "bench.h"

#define N (4u << 20)   /* 4 Mi doubles = 32 MiB per array, 96 MiB total */

int main(int argc, char **argv)
{
    int passes = argc > 1 ? atoi(argv[1]) : 100;
    double *a = malloc(N * sizeof(double)), *b = malloc(N * sizeof(double)), *c = malloc(N * sizeof(double));
    if (!a || !b || !c)
        return 1;
    for (unsigned i = 0; i < N; i++) {
        a[i] = 1.0;
        b[i] = 2.0;
        c[i] = 0.0;
    }
    const double s = 3.0;
    for (int p = 0; p < passes; p++) {
        for (unsigned i = 0; i < N; i++) c[i] = a[i];             /* copy */
        for (unsigned i = 0; i < N; i++) b[i] = s * c[i];         /* scale */
        for (unsigned i = 0; i < N; i++) c[i] = a[i] + b[i];      /* add */
        for (unsigned i = 0; i < N; i++) a[i] = b[i] + s * c[i];  /* triad */
        a[p % N] *= 1e-3;  /* keep the values bounded */
    }
    double sum = 0;
    for (unsigned i = 0; i < N; i += 4096)
        sum += a[i] + b[i] + c[i];
    printf("stream %d passes: checksum %g\n", passes, sum);
    free(a);
    free(b);
    free(c);
    bench_main_done();
    return 0;
}

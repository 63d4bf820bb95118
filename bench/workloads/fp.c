/*
 * fp.c - compute-heavy floating-point kernel: a small n-body simulation whose
 * data fits in L1. Few memory operations per instruction, mostly register
 * arithmetic and sqrt/div: the sampler often lands on non-memory instructions.
 * Usage: fp [steps]   (default sized for ~1.5 s uninstrumented)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "bench.h"

#define BODIES 256

static double px[BODIES], py[BODIES], pz[BODIES], vx[BODIES], vy[BODIES], vz[BODIES], m[BODIES];

static void step(double dt)
{
    for (int i = 0; i < BODIES; i++) {
        double ax = 0, ay = 0, az = 0;
        for (int j = 0; j < BODIES; j++) {
            double dx = px[j] - px[i], dy = py[j] - py[i], dz = pz[j] - pz[i];
            double d2 = dx * dx + dy * dy + dz * dz + 1e-3;
            double inv = m[j] / (d2 * sqrt(d2));
            ax += dx * inv;
            ay += dy * inv;
            az += dz * inv;
        }
        vx[i] += ax * dt;
        vy[i] += ay * dt;
        vz[i] += az * dt;
    }
    for (int i = 0; i < BODIES; i++) {
        px[i] += vx[i] * dt;
        py[i] += vy[i] * dt;
        pz[i] += vz[i] * dt;
    }
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 5000;
    for (int i = 0; i < BODIES; i++) {
        px[i] = cos(i * 0.7) * (1 + i % 7);
        py[i] = sin(i * 1.3) * (1 + i % 5);
        pz[i] = (i % 11) * 0.1;
        m[i] = 1.0 + (i % 3);
    }
    for (int s = 0; s < steps; s++)
        step(1e-4);
    double e = 0;
    for (int i = 0; i < BODIES; i++)
        e += m[i] * (vx[i] * vx[i] + vy[i] * vy[i] + vz[i] * vz[i]);
    printf("fp %d steps: kinetic energy %g\n", steps, e);
    bench_main_done();
    return 0;
}

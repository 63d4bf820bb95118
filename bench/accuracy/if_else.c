/*
 * if_else.c - a planted case of the time bias in native code
 * (docs/accuracy.md, "An if/else in a loop"): each pass stores in one arm
 * of an if/else, alternately 64 passes to a[] (a value that changes every
 * round) and 64 to b[] (always 7: silent). Truth: 50% of the stored bytes
 * are silent. gcc -O2 keeps both stores (no cmov: two arrays).
 *
 * Usage: if_else [ROUNDS]   (default 200000)
 */
#include <stdio.h>
#include <stdlib.h>
#define N 4096
long a[N], b[N];
__attribute__((noinline)) void kernel(long n, long r)
{
    for (long i = 0; i < n; i++) {
        if (i & 64)
            a[i] = r + i;   /* changes every round */
        else
            b[i] = 7;       /* silent */
    }
}
int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 200000;
    for (long r = 0; r < rounds; r++)
        kernel(N, r);
    printf("%ld %ld\n", a[100], b[5]);
    return 0;
}

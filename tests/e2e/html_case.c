/*
 * html_case.c - a planted silent store for the HTML report test (html.sh).
 *
 * Plants: every round, fill_row() stores 7 into each element of row[] (the
 * line marked "PLANT: fill"), then reset_row() stores 7 into each element
 * again ("PLANT: reset"). Every store after the first round is silent:
 * reset_row rewrites what fill_row wrote (C1 fill_row, C2 reset_row) and
 * the next round's fill_row rewrites what reset_row wrote (C1 reset_row,
 * C2 fill_row). So the top pairs join fill_row and reset_row, two different
 * functions, and the program fraction is close to 100%. The test does not
 * assert the fraction (the e2e suite does that for silent_store.c); it
 * needs a real profile whose top pair it can look for in the page.
 *
 * Usage: html_case [SCALE]   (SCALE multiplies the rounds; 1 ~ 0.3 s)
 */
#include <stdio.h>
#include <stdlib.h>

#define N 1024

static long row[N];

__attribute__((noinline)) void fill_row(long *a, long n)
{
    for (long i = 0; i < n; i++)
        a[i] = 7; /* PLANT: fill */
}

__attribute__((noinline)) void reset_row(long *a, long n)
{
    for (long i = 0; i < n; i++)
        a[i] = 7; /* PLANT: reset */
}

int main(int argc, char **argv)
{
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    long rounds = (long)(200000 * scale);
    for (long r = 0; r < rounds; r++) {
        fill_row(row, N);
        reset_row(row, N);
    }
    long sum = 0;
    for (long i = 0; i < N; i++)
        sum += row[i];
    printf("html_case: %ld rounds, checksum %ld\n", rounds, sum);
    return 0;
}

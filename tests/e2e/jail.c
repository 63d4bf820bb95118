/*
 * jail.c - a program that chroots into an empty directory halfway through
 * its work, as privilege-separated daemons do (wasp e2e test: chroot).
 *
 * Usage: jail DIR [ROUNDS]: works, chroots into DIR (made if missing),
 * works as long again, prints one line. Its profile must still be written
 * (before: to a path the jail did not have, "1 of 1 threads' profiles
 * missing") and its frames named (before: `[0x55b5be327291] (?)`).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define N 4096

__attribute__((noinline)) void kernel(long *a, long n, long r)
{
    for (long i = 0; i < n; i++)
        a[i] = (i & 64) ? r : 7; /* PLANT: jail-silent */
}

int main(int argc, char **argv)
{
    static long a[N];
    long rounds = argc > 2 ? atol(argv[2]) : 100000;
    if (argc < 2) {
        fprintf(stderr, "usage: jail DIR [ROUNDS]\n");
        return 2;
    }
    for (long r = 0; r < rounds; r++)
        kernel(a, N, r);
    mkdir(argv[1], 0755);
    if (chroot(argv[1]) != 0 || chdir("/") != 0) {
        perror("jail: chroot");
        return 2;
    }
    for (long r = 0; r < rounds; r++)
        kernel(a, N, r);
    printf("jail: %ld\n", a[100]);
    return 0;
}

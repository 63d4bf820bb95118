/*
 * jail.c - a program that confines itself halfway through its work, as
 * privilege-separated daemons do (wasp e2e test: jail_chroot, jail_setuid).
 *
 * Usage: jail chroot DIR [ROUNDS] | jail setuid [ROUNDS]: works, then
 * chroots into DIR (made if missing) or becomes user nobody (65534), works
 * as long again, prints one line. Its profile must still be written
 * (before: by a path the jail did not have, or into root's 0700 directory:
 * "1 of 1 threads' profiles missing") and its frames named (before:
 * `[0x55b5be327291] (?)`: no /proc/PID/maps inside the jail, nor for a
 * process that changed users).
 */
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define N 4096

__attribute__((noinline)) void kernel(long *a, long n, long r)
{
    for (long i = 0; i < n; i++)
        a[i] = (i & 64) ? r : 7; /* PLANT: jail-silent */
}

static int confine(int argc, char **argv)
{
    if (!strcmp(argv[1], "setuid"))
        return setgroups(0, NULL) || setgid(65534) || setuid(65534) ? -1 : 0;
    if (argc < 3)
        return -1;
    mkdir(argv[2], 0755);
    return chroot(argv[2]) || chdir("/") ? -1 : 0;
}

int main(int argc, char **argv)
{
    static long a[N];
    if (argc < 2 || (strcmp(argv[1], "chroot") && strcmp(argv[1], "setuid"))) {
        fprintf(stderr, "usage: jail chroot DIR [ROUNDS] | jail setuid [ROUNDS]\n");
        return 2;
    }
    int at = !strcmp(argv[1], "chroot") ? 3 : 2;
    long rounds = argc > at ? atol(argv[at]) : 100000;
    for (long r = 0; r < rounds; r++)
        kernel(a, N, r);
    if (confine(argc, argv) != 0) {
        perror("jail");
        return 2;
    }
    for (long r = 0; r < rounds; r++)
        kernel(a, N, r);
    printf("jail: %s %ld\n", argv[1], a[100]);
    return 0;
}

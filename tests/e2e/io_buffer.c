/*
 * io_buffer.c - a buffer handed to the kernel (wasp e2e test, dead-store
 * mode, exact mode).
 *
 * Every round fills a buffer; three rounds of four write it to /dev/null,
 * the fourth does not, and the next round's fill overwrites it. The kernel
 * reads what write(2) is given: those stores are not dead. The analytic
 * fraction is 25% dead, the rounds nothing read. An exact mode that saw
 * only the program's own loads read 100%.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define N 2048

__attribute__((noinline)) void fill(long *a, long n, long r)
{
    for (long i = 0; i < n; i++)
        a[i] = r + i; /* PLANT: io-fill */
}

int main(int argc, char **argv)
{
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    long rounds = (long)(1000000 * scale);
    long *a = calloc(N, sizeof(long));
    int fd = open("/dev/null", O_WRONLY);
    if (!a || fd < 0)
        return 1;
    for (long r = 0; r < rounds; r++) {
        fill(a, N, r);
        if ((r & 3) != 3 && write(fd, a, N * sizeof(long)) != (ssize_t)(N * sizeof(long)))
            return 1;
    }
    printf("io_buffer: %ld rounds\n", rounds);
    free(a);
    return 0;
}

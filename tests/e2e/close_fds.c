/*
 * close_fds.c - a program that closes every descriptor it did not open,
 * opens files of its own (reusing those numbers) and is then stopped by
 * SIGTERM (wasp e2e test: wasp must never write through a descriptor
 * number the program may have reused; its stop-signal pipe once wrote
 * 8 bytes into such a file).
 *
 * close_fds DIR: closes 3..1023, creates DIR/f00..f31 each holding
 * "original\n", prints "ready", then spins until stopped. Expected after
 * SIGTERM: every file still holds exactly "original\n".
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile long sink[256];

int main(int argc, char **argv)
{
    char path[4096];
    if (argc < 2)
        return 2;
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
    for (int i = 0; i < 32; i++) {
        snprintf(path, sizeof(path), "%s/f%02d", argv[1], i);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || write(fd, "original\n", 9) != 9)
            return 3;
        /* kept open: its number is one wasp may have used */
    }
    printf("ready\n");
    fflush(stdout);
    for (long r = 0;; r++)
        for (int i = 0; i < 256; i++)
            sink[i] = r;
}

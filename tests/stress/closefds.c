/*
 * closefds.c - a program that closes every descriptor from 3 to 1024 (as
 * daemons do), opens 32 files of its own and is stopped by SIGTERM
 * (tests/stress/run: close_fds). A thread started before the closing ends
 * after the files are open, then each file gets a second line. wasp must
 * never write into, nor close, a descriptor the program reused: issue 10
 * saw 8 bytes ("15, <pid>") of wasp's stop-signal message land in such a
 * file, and SIGTERM then no longer stopped the program. The suite compares
 * the files with those of an unprofiled run.
 *
 * Usage: closefds DIR  (prints "#fact ready PID" on stderr, then works
 * until a signal ends it)
 */
#include <fcntl.h>
#include "stress.h"

#define FILES 32

static volatile int release;

static void *early_thread(void *arg)
{
    stress_note_thread();
    while (!release)
        stress_burn(1.0);
    return arg;
}

static int write_line(int fd, const char *what, int i)
{
    char line[64];
    int n = snprintf(line, sizeof(line), "%s %d\n", what, i);
    return write(fd, line, (size_t)n) == n;
}

int main(int argc, char **argv)
{
    int fds[FILES], written = 0;
    pthread_t t;
    if (argc < 2)
        return 2;
    stress_note_thread();
    if (pthread_create(&t, NULL, early_thread, NULL) != 0)
        return 3;
    stress_burn(20.0);
    for (int fd = 3; fd <= 1024; fd++)
        close(fd);
    for (int i = 0; i < FILES; i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/f%02d", argv[1], i);
        fds[i] = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fds[i] < 0 || !write_line(fds[i], "first line of file", i))
            return 4;
    }
    release = 1;
    pthread_join(t, NULL);
    for (int i = 0; i < FILES; i++)
        written += write_line(fds[i], "second line of file", i);
    printf("closefds: %d files opened, %d second lines written\n", FILES, written);
    fflush(stdout);
    stress_facts();
    dprintf(2, "#fact ready %d\n", (int)getpid());
    for (;;)
        stress_burn(10.0);
}

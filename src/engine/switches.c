/*
 * switches.c - a thread's context switches (switches.h).
 */
#include "switches.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

int switches_own(uint64_t *n)
{
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) < 0)
        return -1;
    *n = (uint64_t)ru.ru_nvcsw + (uint64_t)ru.ru_nivcsw;
    return 0;
}

/* The number after `key` in a /proc status text, or -1. */
static int status_field(const char *text, const char *key, uint64_t *v)
{
    const char *at = strstr(text, key);
    if (!at)
        return -1;
    char *end;
    unsigned long long n = strtoull(at + strlen(key), &end, 10);
    if (end == at + strlen(key))
        return -1;
    *v = n;
    return 0;
}

int switches_of(pid_t tid, uint64_t *n)
{
    char path[64], text[8192];
    uint64_t vol, invol;
    snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t len = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (len <= 0)
        return -1;
    text[len] = '\0';
    if (status_field(text, "\nvoluntary_ctxt_switches:", &vol) < 0 ||
        status_field(text, "\nnonvoluntary_ctxt_switches:", &invol) < 0)
        return -1;
    *n = vol + invol;
    return 0;
}

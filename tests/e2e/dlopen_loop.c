/*
 * dlopen_loop.c - loads and unloads a library in a loop (wasp e2e test,
 * case dlopen_loop).
 *
 * Each dlopen and dlclose takes glibc's loader write lock, which libunwind
 * takes too (dl_iterate_phdr) when wasp's handlers look for a pc's unwind
 * table. A signal between the lock's taking and its owner's recording left
 * the handler waiting for its own thread: this program hung under wasp
 * within seconds at a 100 us interval (3 runs of 3), and once unhung it
 * crashed at exit, its profile naming instructions of a library already
 * unloaded. libexpat comes with python3, which the build installs.
 *
 * Usage: dlopen_loop [SECONDS]: loops until the process used SECONDS of CPU
 * time (default 3), then prints "dlopen_loop N".
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 3;
    long n = 0;
    while (cpu_seconds() < secs) {
        void *h = dlopen("libexpat.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "dlopen_loop: %s\n", dlerror());
            return 1;
        }
        dlclose(h);
        n++;
    }
    printf("dlopen_loop %ld\n", n);
    return 0;
}

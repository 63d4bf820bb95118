/*
 * main.c - the `wasp` command: dispatches to its subcommands.
 */
#include <stdio.h>
#include <string.h>

#include "attach.h"
#include "diff.h"
#include "doctor.h"
#include "report.h"
#include "run.h"

#define WASP_VERSION "0.1.0"

static void usage(FILE *out)
{
    fprintf(out,
            "wasp %s - finds dead stores, silent stores and silent loads\n\n"
            "usage:\n"
            "  wasp run [--mode dead-store|silent-store|silent-load] [--sampler auto|pmu|software|ctimer]\n"
            "           [--interval T] [--period N] [--slots 1-4] [--fp-tolerance F]\n"
            "           [--stack include|exclude] [--no-watch-check] [-o DIR] -- CMD [ARGS...]\n"
            "  wasp run --exact [--mode ...] [--fp-tolerance F] [--stack include|exclude]\n"
            "           [--exact-limit N|Ts] [-o DIR] -- CMD [ARGS...]   every access, under Valgrind\n"
            "  wasp attach PID [--duration T] [--mode ...] [--interval T] [--no-wait] [-o DIR]\n"
            "           profile a running HotSpot JVM for T (default 30s)\n"
            "  wasp attach PID --stop   end that run early\n"
            "  wasp report DIR [--format text|json|html|collapsed|pprof] [--top N] [--pid PID]\n"
            "           [--side watch|trap] [-o FILE]\n"
            "  wasp diff A B [--format text|json|html] [--top N] [-o FILE]   B - A, pair by pair\n"
            "  wasp doctor [--watch]   what this machine supports and what wasp will use\n"
            "  wasp --version | --help\n",
            WASP_VERSION);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "run") == 0)
        return run_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "attach") == 0)
        return attach_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "report") == 0)
        return report_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "diff") == 0)
        return diff_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "doctor") == 0)
        return doctor_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("wasp %s\n", WASP_VERSION);
        return 0;
    }
    fprintf(stderr, "[wasp] ERROR unknown command '%s' — use run, attach, report, diff or doctor (wasp --help)\n", argv[1]);
    return 2;
}

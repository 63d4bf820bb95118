/*
 * report.h - `wasp report`: merges a run's profiles and prints them.
 */
#ifndef WASP_REPORT_H
#define WASP_REPORT_H

/* argv[0] is "report". Returns the process exit status: 0, or 2 for a
 * usage error, a missing or damaged profile, or an output error. */
int report_main(int argc, char **argv);

/* The command line alone: 0, 1 after --help, 2 on a usage error (printed).
 * For tests and fuzzers. */
int report_parse_args(int argc, char **argv);

#endif

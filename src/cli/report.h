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
#include <stdio.h>
#include "merge.h"

/* Loads every profile of a run (a run directory, one pid directory or one
 * file) into m (merge_init'd) and finishes it. Returns 0, or -1 after one
 * "[wasp] ERROR" line (missing, empty, damaged, mixed modes). */
int report_load_run(const char *dir, merge_model *m);

/* Writes a report to out through render, atomically (temporary file, then
 * rename). Returns 0, or -1 after one "[wasp] ERROR" line. */
int report_publish_file(const char *out, int (*render)(FILE *, const void *), const void *arg);

#endif

/*
 * doctor.h - `wasp doctor`: what this machine offers wasp and what wasp
 * will use on it.
 */
#ifndef WASP_DOCTOR_H
#define WASP_DOCTOR_H

#include <stddef.h>
#include <stdio.h>

/* argv[0] is "doctor". Returns 0 when wasp can profile here, 1 when it
 * cannot (with a [wasp] ERROR line that names the fix), 2 on a usage error. */
int doctor_main(int argc, char **argv);

/* The report itself, with the PMU descriptions read under sysfs_root and
 * JDKs looked for under jvm_root, so tests can point both at fake trees.
 * Opens (and closes) real events on the calling thread. Returns 0 when wasp
 * can profile, else 1 with the reason and its fix in err. */
int doctor_report(FILE *out, const char *sysfs_root, const char *jvm_root, char *err, size_t errlen);

#endif

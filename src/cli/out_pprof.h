/*
 * out_pprof.h - the report model as a gzip'd pprof profile
 * (perftools.profiles.Profile, schema src/res/profile.proto), for
 * `go tool pprof` and for continuous-profiling services that ingest pprof
 * (Pyroscope, Parca).
 */
#ifndef WASP_OUT_PPROF_H
#define WASP_OUT_PPROF_H

#include "merge.h"

#include <stdio.h>

/* Sample values, in this order. */
#define PPROF_WASTEFUL "wasteful_bytes"     /* precisely wasteful: dead or silent */
#define PPROF_MONITORED "monitored_bytes"   /* the denominator of Eq. 1/2 */

/* Writes every pair of m to f as one sample whose stack, leaf first, is the
 * trap context C2, a frame named after the relation (merge_relation), then
 * the watch context C1; labels carry the mode, approximately wasteful bytes,
 * traps and both leaf instructions; comments carry the program fractions.
 * time_ns (ns since 1970, 0 when unknown) is when the run ended: services
 * file the profile under it. Returns 0, or -1 on a write error or out of
 * memory (errno says which). */
int pprof_write_report(FILE *f, const merge_model *m, int64_t time_ns);

#endif

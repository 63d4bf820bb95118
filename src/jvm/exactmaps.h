/*
 * exactmaps.h - the agent's maps-only mode for the exact mode (exactmaps.c).
 */
#ifndef WASP_EXACTMAPS_H
#define WASP_EXACTMAPS_H

#include <jvmti.h>
#include <stddef.h>
#include "../exact/exact_requests.h"

/* Agent_OnLoad with option "exact-maps". Returns 0, or -1 with err set. */
int exactmaps_start(JavaVM *vm, char *err, size_t errlen);

/* jcode.c: code's scopes with their whole inlining chains, from
 * CompiledMethodLoad's records (or its address map when it has none);
 * code->scopes and code->frames are malloc'd. Returns 0 or -1. */
int exactmaps_scopes(wx_code *code, const void *compile_info, const jvmtiAddrLocationMap *map,
                     jint map_length);

#endif

/*
 * codemap.h - where the JVM's generated code lives: JIT-compiled methods,
 * the interpreter and stubs, as JVMTI reports them.
 *
 * Written from JVMTI callbacks (normal context, serialized by a mutex);
 * read from signal handlers without locks: entries are published with
 * release stores and never freed, only marked dead when unloaded.
 */
#ifndef WASP_CODEMAP_H
#define WASP_CODEMAP_H

#include <stddef.h>
#include <stdint.h>

enum code_kind { CODE_JIT = 1, CODE_STUB = 2, CODE_INTERPRETER = 3 };

typedef struct code_blob {
    uint64_t start, end;
    uint64_t method;        /* jmethodID for CODE_JIT, 0 otherwise */
    const char *name;       /* stub name for CODE_STUB/CODE_INTERPRETER, NULL for JIT */
    uint8_t kind;
    volatile uint8_t dead;  /* unloaded: its range may hold other code now */
} code_blob;

int codemap_init(void);

/* Normal context. Records a blob; name is copied. Returns 0 or -1 when full. */
int codemap_add(uint64_t start, uint64_t end, enum code_kind kind, uint64_t method, const char *name);

/* Normal context. Marks the JIT blob of method at start dead. */
void codemap_remove(uint64_t start, uint64_t method);

/* Signal-safe. The live blob containing pc, newest first, or NULL. */
const code_blob *codemap_find(uint64_t pc);

/* Counts for the profile: blobs recorded and blobs refused when full. */
uint64_t codemap_count(void);

#endif

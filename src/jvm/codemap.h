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

/* Where a JIT method's instructions come from: the scope (innermost method
 * and bci, inlining included) of the code up to and including offset. */
typedef struct code_scope {
    uint32_t offset;
    int32_t bci;
    uint64_t method;        /* jmethodID */
} code_scope;

typedef struct code_blob {
    uint64_t start, end;
    uint64_t method;        /* jmethodID for CODE_JIT, 0 otherwise */
    const char *name;       /* stub name for CODE_STUB/CODE_INTERPRETER, NULL for JIT */
    uint8_t kind;
    volatile uint8_t dead;  /* unloaded: its range may hold other code now */
    volatile uint8_t wanted;/* a profile context names an instruction in it */
    uint8_t *saved;         /* its bytes, copied at unload when wanted */
    code_scope *scopes;     /* by offset; NULL when unknown */
    uint32_t nscopes;
} code_blob;

int codemap_init(void);

/* Normal context. Records a blob; name is copied, scopes (malloc'd, sorted)
 * are taken over. Returns 0 or -1 when full. */
int codemap_add(uint64_t start, uint64_t end, enum code_kind kind, uint64_t method, const char *name,
                code_scope *scopes, uint32_t nscopes);

/* Normal context. Marks the JIT blob of method at start dead. */
void codemap_remove(uint64_t start, uint64_t method);

/* Signal-safe. The live blob containing pc, newest first, or NULL. */
const code_blob *codemap_find(uint64_t pc);

/* Signal-safe. Marks the live blob holding pc as named by a profile, so
 * that its bytes outlive an unload; returns its id (0 when none). The id
 * keeps naming that code after the range is reused by newer code. */
uint32_t codemap_mark_wanted(uint64_t pc);

/* The blob with this id, or NULL. */
const code_blob *codemap_blob(uint32_t id);

#endif

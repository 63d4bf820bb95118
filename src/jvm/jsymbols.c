/*
 * jsymbols.c - names Java frames: class.method, source file and line, via
 * JVMTI. Normal context only (profile writing at ThreadEnd or VMDeath),
 * where JVMTI calls are allowed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jvm.h"
#include "native.h"

static jvmtiEnv *jvmti;

void jvm_symbols_init(jvmtiEnv *env)
{
    jvmti = env;
}

/* "Ljava/util/HashMap$HashIterator;" -> "java.util.HashMap$HashIterator".
 * JVMTI writes a hidden class (a lambda) with a '.' before its address
 * suffix, which no other class name has ("LMain$$Lambda.0x...;" on JDK 25,
 * "LMain$$Lambda$14.0x...;" on 17): it is printed as the JDK prints it,
 * "Main$$Lambda/0x0000000800c01000", not as a class of that name. */
static void class_name(const char *sig, char *out, size_t len)
{
    size_t n = 0;
    if (*sig == 'L')
        sig++;
    for (; *sig && *sig != ';' && n + 1 < len; sig++)
        out[n++] = *sig == '/' ? '.' : *sig == '.' ? '/' : *sig;
    out[n] = '\0';
}

static uint32_t line_of(jmethodID m, int32_t bci)
{
    jint count = 0;
    jvmtiLineNumberEntry *table = NULL;
    uint32_t line = 0;
    jlocation best = -1;
    if (bci < 0 || (*jvmti)->GetLineNumberTable(jvmti, m, &count, &table) != JVMTI_ERROR_NONE)
        return 0;
    for (jint i = 0; i < count; i++) {
        if (table[i].start_location <= bci && table[i].start_location > best) {
            best = table[i].start_location;
            line = (uint32_t)table[i].line_number;
        }
    }
    (*jvmti)->Deallocate(jvmti, (unsigned char *)table);
    return line;
}

void jvm_name_method(jmethodID m, int32_t bci, char **function, char **file, uint32_t *line)
{
    jclass klass = NULL;
    char *sig = NULL, *name = NULL, *source = NULL;
    char cls[512], buf[1024];
    *file = NULL;
    *line = 0;
    if (!jvmti || (*jvmti)->GetMethodDeclaringClass(jvmti, m, &klass) != JVMTI_ERROR_NONE ||
        (*jvmti)->GetClassSignature(jvmti, klass, &sig, NULL) != JVMTI_ERROR_NONE ||
        (*jvmti)->GetMethodName(jvmti, m, &name, NULL, NULL) != JVMTI_ERROR_NONE) {
        *function = strdup("[unknown Java method]");
    } else {
        class_name(sig, cls, sizeof(cls));
        snprintf(buf, sizeof(buf), "%s.%s", cls, name);
        *function = strdup(buf);
        if ((*jvmti)->GetSourceFileName(jvmti, klass, &source) == JVMTI_ERROR_NONE)
            *file = strdup(source);
        *line = line_of(m, bci);
    }
    if (jvmti) {
        (*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)source);
    }
}

int jvm_symbolize(frame_key f, int leaf, prof_frame *out, int max)
{
    if ((f.aux & FRAME_TAG_MASK) != FRAME_JAVA || !jvmti)
        return native_symbolize(f, leaf, out, max);
    jvm_name_method((jmethodID)(uintptr_t)f.id, (int32_t)(uint32_t)f.aux, &out->function, &out->file,
                    &out->line);
    out->pc = 0;
    if (!out->file)
        out->file = strdup("");
    if (!out->module)
        out->module = strdup("");
    if (!out->instruction)
        out->instruction = strdup("");
    return 1;
}

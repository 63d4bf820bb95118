/*
 * exactmaps.c - the agent's maps-only mode, for `wasp run --exact` on a JVM
 * (-agentpath:libwasp.so=exact-maps, set by the CLI).
 *
 * Under the exact mode Valgrind's tool sees every access; what it cannot
 * see is Java: which threads are Java threads, which Java frames (inlining
 * included) a stretch of JIT code belongs to, when a GC moves objects, and
 * what a method is called. This mode tells it exactly that, through
 * Valgrind client requests (src/exact/exact_requests.h), as the JVM reports
 * it: threads (ThreadStart/VMInit/ThreadEnd), generated code
 * (CompiledMethodLoad with HotSpot's inlining records, DynamicCodeGenerated
 * for the interpreter and stubs, CompiledMethodUnload), GC starts, and at
 * VMDeath the names (Class.method, file, line) of the frames the tool's
 * contexts use. It arms nothing and samples nothing: no engine, no timer.
 * Interpreted frames reach the tool as (Method*, bytecode pointer), read
 * from the interpreter's frame; they become a method and a bci here, with
 * HotSpot's own layout tables (gHotSpotVMStructs).
 *
 * Normal context only (JVMTI callbacks). Failures print one [wasp] ERROR
 * line; the JVM always runs on.
 */
#include <dlfcn.h>
#include <jni.h>
#include <jvmticmlr.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <valgrind/valgrind.h>

#include "../exact/exact_requests.h"
#include "exactmaps.h"
#include "jvm.h"

static jvmtiEnv *jvmti;

/* Every jmethodID made (ClassPrepare), to find an interpreted frame's
 * method: a jmethodID points at its Method*. */
static struct {
    pthread_mutex_t lock;
    jmethodID *ids;
    size_t n, cap;
} methods = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Where a Method*'s bytecodes start: Method::_constMethod, then right
 * after the ConstMethod. 0 when HotSpot's tables do not say. */
static size_t const_method_offset, const_method_size;

static unsigned long request(unsigned long req, unsigned long a1, unsigned long a2, unsigned long a3,
                             unsigned long a4)
{
    return (unsigned long)VALGRIND_DO_CLIENT_REQUEST_EXPR(0, req, a1, a2, a3, a4, 0);
}

static void keep_methods(jclass klass)
{
    jint count = 0;
    jmethodID *ids = NULL;
    if ((*jvmti)->GetClassMethods(jvmti, klass, &count, &ids) != JVMTI_ERROR_NONE)
        return;
    pthread_mutex_lock(&methods.lock);
    if (methods.n + (size_t)count > methods.cap) {
        size_t cap = methods.cap ? methods.cap : 4096;
        while (cap < methods.n + (size_t)count)
            cap *= 2;
        jmethodID *grown = realloc(methods.ids, cap * sizeof(*grown));
        if (grown) {
            methods.ids = grown;
            methods.cap = cap;
        }
    }
    for (jint i = 0; i < count && methods.n < methods.cap; i++)
        methods.ids[methods.n++] = ids[i];
    pthread_mutex_unlock(&methods.lock);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)ids);
}

/* ---- HotSpot's layout tables ---- */

static uint64_t sym_u64(const char *name)
{
    const uint64_t *p = dlsym(RTLD_DEFAULT, name);
    return p ? *p : 0;
}

static void read_layout(void)
{
    char *const *structs = dlsym(RTLD_DEFAULT, "gHotSpotVMStructs");
    char *const *types = dlsym(RTLD_DEFAULT, "gHotSpotVMTypes");
    uint64_t s_type = sym_u64("gHotSpotVMStructEntryTypeNameOffset"),
             s_field = sym_u64("gHotSpotVMStructEntryFieldNameOffset"),
             s_off = sym_u64("gHotSpotVMStructEntryOffsetOffset"),
             s_stride = sym_u64("gHotSpotVMStructEntryArrayStride"),
             t_type = sym_u64("gHotSpotVMTypeEntryTypeNameOffset"),
             t_size = sym_u64("gHotSpotVMTypeEntrySizeOffset"),
             t_stride = sym_u64("gHotSpotVMTypeEntryArrayStride");
    if (!structs || !*structs || !types || !*types || !s_stride || !t_stride)
        return;
    for (const char *e = *structs; *(const char *const *)(e + s_type); e += s_stride) {
        const char *type = *(const char *const *)(e + s_type), *field = *(const char *const *)(e + s_field);
        if (field && !strcmp(type, "Method") && !strcmp(field, "_constMethod"))
            const_method_offset = (size_t)*(const uint64_t *)(e + s_off);
    }
    for (const char *e = *types; *(const char *const *)(e + t_type); e += t_stride)
        if (!strcmp(*(const char *const *)(e + t_type), "ConstMethod"))
            const_method_size = (size_t)*(const uint64_t *)(e + t_size);
}

/* ---- naming the tool's frames ---- */

static int by_method(const void *a, const void *b)
{
    uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];
    return x < y ? -1 : x > y;
}

/* (Method*, jmethodID) pairs sorted by Method*, from every id made. */
static uint64_t (*method_index(size_t *n))[2]
{
    uint64_t (*ix)[2] = malloc((methods.n ? methods.n : 1) * sizeof(*ix));
    *n = 0;
    for (size_t i = 0; ix && i < methods.n; i++) {
        uint64_t m = *(const uint64_t *)methods.ids[i];
        if (m) {
            ix[*n][0] = m;
            ix[*n][1] = (uint64_t)(uintptr_t)methods.ids[i];
            (*n)++;
        }
    }
    if (ix)
        qsort(ix, *n, sizeof(*ix), by_method);
    return ix;
}

/* An interpreted frame's (Method*, bcp) as (jmethodID, bci); 0 when unknown. */
static jmethodID resolve_interpreted(uint64_t (*ix)[2], size_t n, const wx_frame *f, int32_t *bci)
{
    uint64_t key[2] = { f->method, 0 };
    const uint64_t *hit = ix ? bsearch(key, ix, n, sizeof(*ix), by_method) : NULL;
    *bci = -1;
    if (!hit)
        return NULL;
    if (const_method_offset && const_method_size) {
        uint64_t cm = *(const uint64_t *)(uintptr_t)(f->method + const_method_offset);
        uint64_t codes = cm + const_method_size;
        if (f->bci >= codes && f->bci - codes < 65536)
            *bci = (int32_t)(f->bci - codes);
    }
    return (jmethodID)(uintptr_t)hit[1];
}

static void name_frames(void)
{
    unsigned long n = request(WX_NEEDED, 0, 0, 0, 0);
    wx_frame *frames = n ? calloc(n, sizeof(*frames)) : NULL;
    size_t nix = 0;
    if (!frames)
        return;
    n = request(WX_NEEDED, (unsigned long)(uintptr_t)frames, n, 0, 0);
    /* Classes defined since (hidden ones: lambda forms) may have no ClassPrepare. */
    jvm_each_loaded_class(jvmti, keep_methods);
    pthread_mutex_lock(&methods.lock);
    uint64_t (*ix)[2] = method_index(&nix);
    pthread_mutex_unlock(&methods.lock);
    for (unsigned long i = 0; i < n; i++) {
        jmethodID m = (jmethodID)(uintptr_t)frames[i].method;
        int32_t bci = (int32_t)frames[i].bci;
        char *function = NULL, *file = NULL;
        uint32_t line = 0;
        if (frames[i].kind == WX_FRAME_INTERPRETED)
            m = resolve_interpreted(ix, nix, &frames[i], &bci);
        if (m)
            jvm_name_method(m, bci, &function, &file, &line);
        request(WX_NAME, i, (unsigned long)(uintptr_t)(function ? function : "[unknown Java method]"),
                (unsigned long)(uintptr_t)(file ? file : ""), line);
        free(function);
        free(file);
    }
    free(ix);
    free(frames);
}

/* ---- JVMTI events ---- */

static void JNICALL on_thread_start(jvmtiEnv *env, JNIEnv *jni, jthread thread)
{
    (void)env; (void)jni; (void)thread;
    request(WX_THREAD, 1, 0, 0, 0);
}

static void JNICALL on_thread_end(jvmtiEnv *env, JNIEnv *jni, jthread thread)
{
    (void)env; (void)jni; (void)thread;
    request(WX_THREAD, 0, 0, 0, 0);
}

static void JNICALL on_class_prepare(jvmtiEnv *env, JNIEnv *jni, jthread thread, jclass klass)
{
    (void)env; (void)jni; (void)thread;
    keep_methods(klass);
}

/* An agent thread that asks the tool, ten times a second, whether
 * --exact-limit cut the run: then it names the frames and the tool ends the
 * run. Not watched itself (it is the agent's, not the program's). */
static void JNICALL poller(jvmtiEnv *env, JNIEnv *jni, void *arg)
{
    (void)env; (void)jni; (void)arg;
    request(WX_THREAD, 0, 0, 0, 0);
    for (;;) {
        if (request(WX_POLL, 0, 0, 0, 0)) {
            name_frames();
            request(WX_CUT_DONE, 0, 0, 0, 0);
        }
        usleep(100000);
    }
}

static void start_poller(JNIEnv *jni)
{
    jclass cls = (*jni)->FindClass(jni, "java/lang/Thread");
    jmethodID init = cls ? (*jni)->GetMethodID(jni, cls, "<init>", "(Ljava/lang/String;)V") : NULL;
    jstring name = (*jni)->NewStringUTF(jni, "wasp exact-limit poller");
    jobject t = init && name ? (*jni)->NewObject(jni, cls, init, name) : NULL;
    if (!t || (*jvmti)->RunAgentThread(jvmti, t, poller, NULL, JVMTI_THREAD_MIN_PRIORITY) != JVMTI_ERROR_NONE)
        fprintf(stderr, "[wasp] ERROR cannot start the agent's thread: --exact-limit will leave Java frames unnamed\n");
}

static void JNICALL on_vm_init(jvmtiEnv *env, JNIEnv *jni, jthread thread)
{
    (void)env; (void)thread;
    jvm_each_loaded_class(jvmti, keep_methods);
    /* The main thread started before ThreadStart events could reach us. */
    request(WX_THREAD, 1, 0, 0, 0);
    start_poller(jni);
}

static void JNICALL on_vm_death(jvmtiEnv *env, JNIEnv *jni)
{
    (void)env; (void)jni;
    name_frames();
    request(WX_DEATH, 0, 0, 0, 0);
}

static void JNICALL on_compiled_method_load(jvmtiEnv *env, jmethodID method, jint size, const void *addr,
                                            jint map_length, const jvmtiAddrLocationMap *map,
                                            const void *compile_info)
{
    (void)env;
    uint64_t start = (uint64_t)(uintptr_t)addr;
    wx_code code = { .start = start, .end = start + (uint64_t)size, .kind = WX_JIT,
                     .method = (uint64_t)(uintptr_t)method };
    if (exactmaps_scopes(&code, compile_info, map, map_length) == 0)
        request(WX_CODE, (unsigned long)(uintptr_t)&code, 0, 0, 0);
    free((void *)code.scopes);
    free((void *)code.frames);
}

static void JNICALL on_compiled_method_unload(jvmtiEnv *env, jmethodID method, const void *addr)
{
    (void)env; (void)method;
    request(WX_UNLOAD, (unsigned long)(uintptr_t)addr, 0, 0, 0);
}

static void JNICALL on_dynamic_code(jvmtiEnv *env, const char *name, const void *addr, jint length)
{
    (void)env;
    uint64_t start = (uint64_t)(uintptr_t)addr;
    wx_code code = { .start = start, .end = start + (uint64_t)length,
                     .kind = name && !strcmp(name, "Interpreter") ? WX_INTERPRETER : WX_STUB };
    request(WX_CODE, (unsigned long)(uintptr_t)&code, 0, 0, 0);
}

static void JNICALL on_gc_start(jvmtiEnv *env)
{
    (void)env;
    request(WX_GC, 0, 0, 0, 0);
}

static int enable(void)
{
    static const jvmtiEvent events[] = {
        JVMTI_EVENT_VM_INIT, JVMTI_EVENT_VM_DEATH, JVMTI_EVENT_THREAD_START, JVMTI_EVENT_THREAD_END,
        JVMTI_EVENT_CLASS_PREPARE, JVMTI_EVENT_COMPILED_METHOD_LOAD, JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
        JVMTI_EVENT_DYNAMIC_CODE_GENERATED, JVMTI_EVENT_GARBAGE_COLLECTION_START,
    };
    const jvmtiEventCallbacks cb = {
        .VMInit = on_vm_init, .VMDeath = on_vm_death, .ThreadStart = on_thread_start,
        .ThreadEnd = on_thread_end, .ClassPrepare = on_class_prepare,
        .CompiledMethodLoad = on_compiled_method_load, .CompiledMethodUnload = on_compiled_method_unload,
        .DynamicCodeGenerated = on_dynamic_code, .GarbageCollectionStart = on_gc_start,
    };
    if (jvm_request_capabilities(jvmti) < 0)
        return -1;
    return jvm_enable_events(jvmti, &cb, events, sizeof(events) / sizeof(events[0]));
}

int exactmaps_start(JavaVM *vm, char *err, size_t errlen)
{
    if (request(WX_HELLO, 0, 0, 0, 0) != WX_VERSION) {
        snprintf(err, errlen, "the exact-maps agent option is for `wasp run --exact` only — run "
                 "the program with `wasp run --exact -- java ...`");
        return -1;
    }
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
        snprintf(err, errlen, "this JVM offers no JVMTI 1.2 environment");
        return -1;
    }
    jvm_symbols_init(jvmti);
    read_layout();
    if (enable() < 0) {
        snprintf(err, errlen, "the JVM refused the JVMTI capabilities or events wasp needs");
        return -1;
    }
    return 0;
}

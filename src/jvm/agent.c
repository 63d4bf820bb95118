/*
 * agent.c - the JVMTI agent: Agent_OnLoad, options, and the JVM events that
 * drive the engine (threads, classes, generated code, GC, VM death).
 *
 * Loaded with -agentpath:libwasp.so=mode=...,interval=...,dir=... (or by
 * `wasp run` through JAVA_TOOL_OPTIONS). Any failure prints one [wasp]
 * ERROR line and returns JNI_OK: the JVM always runs on, unprofiled if need
 * be. Nothing here runs in a signal handler.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codemap.h"
#include "jvm.h"

static jvmtiEnv *jvmti;

static void report_error(const char *what)
{
    fprintf(stderr, "[wasp] ERROR %s; the JVM runs on unprofiled\n", what);
}

/* ASGCT only returns usable method ids for methods whose ids exist; making
 * them when a class is prepared is what makes that true (measured on JDK 17
 * and 25; ASGCT also needs ClassLoad events enabled, hence on_class_load). */
static void create_method_ids(jclass klass)
{
    jint count = 0;
    jmethodID *methods = NULL;
    if ((*jvmti)->GetClassMethods(jvmti, klass, &count, &methods) == JVMTI_ERROR_NONE)
        (*jvmti)->Deallocate(jvmti, (unsigned char *)methods);
}

static void begin_java_thread(JNIEnv *env, jthread thread)
{
    jvm_thread *jt = NULL;
    /* The main thread can be announced twice (ThreadStart and VMInit). */
    if ((*jvmti)->GetThreadLocalStorage(jvmti, thread, (void **)&jt) != JVMTI_ERROR_NONE || jt)
        return;
    jt = calloc(1, sizeof(*jt));
    if (!jt)
        return;
    jt->env = env;
    jt->tid = gettid();   /* ThreadStart and VMInit run on the thread itself */
    jt->state = engine_thread_begin(jt);
    /* Until this copy lands, a sample's stub step-out finds no stack and
     * that one sample is dropped: harmless, and it saves a second lookup. */
    engine_thread_stack(jt->state, &jt->stack_lo, &jt->stack_hi);
    if (!jt->state || (*jvmti)->SetThreadLocalStorage(jvmti, thread, jt) != JVMTI_ERROR_NONE) {
        engine_thread_end(jt->state);
        free(jt);
    }
}

static void JNICALL on_thread_start(jvmtiEnv *env, JNIEnv *jni, jthread thread)
{
    (void)env;
    begin_java_thread(jni, thread);
}

static void JNICALL on_thread_end(jvmtiEnv *env, JNIEnv *jni, jthread thread)
{
    jvm_thread *jt = NULL;
    (void)env;
    (void)jni;
    if ((*jvmti)->GetThreadLocalStorage(jvmti, thread, (void **)&jt) != JVMTI_ERROR_NONE || !jt)
        return;
    (*jvmti)->SetThreadLocalStorage(jvmti, thread, NULL);
    engine_thread_end(jt->state);
    free(jt);
}

static void JNICALL on_class_load(jvmtiEnv *env, JNIEnv *jni, jthread thread, jclass klass)
{
    (void)env; (void)jni; (void)thread; (void)klass;
}

static void JNICALL on_class_prepare(jvmtiEnv *env, JNIEnv *jni, jthread thread, jclass klass)
{
    (void)env; (void)jni; (void)thread;
    create_method_ids(klass);
}

static void JNICALL on_vm_init(jvmtiEnv *env, JNIEnv *jni, jthread thread)
{
    jint count = 0;
    jclass *classes = NULL;
    (void)env;
    if ((*jvmti)->GetLoadedClasses(jvmti, &count, &classes) == JVMTI_ERROR_NONE) {
        for (jint i = 0; i < count; i++)
            create_method_ids(classes[i]);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)classes);
    }
    /* The main thread started before ThreadStart events could reach us. */
    begin_java_thread(jni, thread);
}

static void JNICALL on_vm_death(jvmtiEnv *env, JNIEnv *jni)
{
    (void)env; (void)jni;
    engine_shutdown();
}

static void JNICALL on_compiled_method_load(jvmtiEnv *env, jmethodID method, jint size, const void *addr,
                                            jint map_length, const jvmtiAddrLocationMap *map,
                                            const void *compile_info)
{
    (void)env;
    uint32_t nscopes = 0;
    uint64_t start = (uint64_t)(uintptr_t)addr;
    code_scope *scopes = jcode_scopes(method, start, (uint64_t)size, compile_info, map, map_length, &nscopes);
    codemap_add(start, start + (uint64_t)size, CODE_JIT, (uint64_t)(uintptr_t)method, NULL, scopes, nscopes);
}

static void JNICALL on_compiled_method_unload(jvmtiEnv *env, jmethodID method, const void *addr)
{
    (void)env;
    codemap_remove((uint64_t)(uintptr_t)addr, (uint64_t)(uintptr_t)method);
}

static void JNICALL on_dynamic_code(jvmtiEnv *env, const char *name, const void *addr, jint length)
{
    (void)env;
    uint64_t start = (uint64_t)(uintptr_t)addr;
    enum code_kind kind = name && strcmp(name, "Interpreter") == 0 ? CODE_INTERPRETER : CODE_STUB;
    codemap_add(start, start + (uint64_t)length, kind, 0, name, NULL, 0);
}

/* Objects move during a GC: no pair may span one (paper §5.3). */
static void JNICALL on_gc_start(jvmtiEnv *env)
{
    (void)env;
    engine_new_epoch();
}

static int request_capabilities(void)
{
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof(caps));
    caps.can_generate_compiled_method_load_events = 1;
    caps.can_get_line_numbers = 1;
    caps.can_get_source_file_name = 1;
    caps.can_generate_garbage_collection_events = 1;
    return (*jvmti)->AddCapabilities(jvmti, &caps) == JVMTI_ERROR_NONE ? 0 : -1;
}

static int enable_events(void)
{
    static const jvmtiEvent events[] = {
        JVMTI_EVENT_VM_INIT, JVMTI_EVENT_VM_DEATH, JVMTI_EVENT_THREAD_START, JVMTI_EVENT_THREAD_END,
        JVMTI_EVENT_CLASS_LOAD, JVMTI_EVENT_CLASS_PREPARE, JVMTI_EVENT_COMPILED_METHOD_LOAD,
        JVMTI_EVENT_COMPILED_METHOD_UNLOAD, JVMTI_EVENT_DYNAMIC_CODE_GENERATED,
        JVMTI_EVENT_GARBAGE_COLLECTION_START,
    };
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof(cb));
    cb.VMInit = on_vm_init;
    cb.VMDeath = on_vm_death;
    cb.ThreadStart = on_thread_start;
    cb.ThreadEnd = on_thread_end;
    cb.ClassLoad = on_class_load;
    cb.ClassPrepare = on_class_prepare;
    cb.CompiledMethodLoad = on_compiled_method_load;
    cb.CompiledMethodUnload = on_compiled_method_unload;
    cb.DynamicCodeGenerated = on_dynamic_code;
    cb.GarbageCollectionStart = on_gc_start;
    if ((*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb)) != JVMTI_ERROR_NONE)
        return -1;
    for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
        if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL) != JVMTI_ERROR_NONE)
            return -1;
    return 0;
}

static int start(JavaVM *vm, const char *options, char *err, size_t errlen)
{
    wasp_options o;
    options_defaults(&o);
    snprintf(o.dir, sizeof(o.dir), "wasp-%d", (int)getpid());
    if (options_parse(options, &o, err, errlen) < 0)
        return -1;
    if (engine_active()) {
        snprintf(err, errlen, "libwasp.so is already profiling this process natively (LD_PRELOAD)");
        return -1;
    }
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
        snprintf(err, errlen, "this JVM offers no JVMTI 1.2 environment");
        return -1;
    }
    if (jvm_stacks_init() < 0) {
        snprintf(err, errlen, "AsyncGetCallTrace not found — wasp needs a HotSpot JVM (OpenJDK, Temurin)");
        return -1;
    }
    if (codemap_init() < 0 || request_capabilities() < 0) {
        snprintf(err, errlen, "the JVM refused the JVMTI capabilities wasp needs");
        return -1;
    }
    jvm_symbols_init(jvmti);
    if (engine_init(&o, &jvm_frontend, err, errlen) < 0)
        return -1;
    if (enable_events() < 0) {
        snprintf(err, errlen, "cannot enable JVMTI events");
        return -1;
    }
    return 0;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    char err[512];
    (void)reserved;
    if (start(vm, options, err, sizeof(err)) < 0)
        report_error(err);
    return JNI_OK;
}

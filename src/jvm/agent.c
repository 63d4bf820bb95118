/*
 * agent.c - the JVMTI agent: Agent_OnLoad, options, and the JVM events that
 * drive the engine (threads, classes, generated code, GC, VM death).
 *
 * Loaded with -agentpath:libwasp.so=mode=...,interval=...,dir=... (or by
 * `wasp run` through JAVA_TOOL_OPTIONS), or into a running JVM by `wasp
 * attach` (onattach.c, which shares the set-up here). Any failure prints
 * one [wasp] ERROR line and returns JNI_OK: the JVM always runs on,
 * unprofiled if need be. Nothing here runs in a signal handler. With the
 * option "exact-maps" it only feeds the exact mode's Valgrind tool
 * (exactmaps.c).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "codemap.h"
#include "exactmaps.h"
#include "native.h"

static jvmtiEnv *jvmti;
/* A jvm_thread belongs to whoever takes it out of its thread's local
 * storage: the thread itself when it ends, or the end of an attached run. */
static pthread_mutex_t thread_lock = PTHREAD_MUTEX_INITIALIZER;
/* Set in threads of wasp's own (the attached run's timer, the checkpoint
 * thread): never profiled. */
static __thread int own_thread;
static JavaVM *the_vm;

void agent_report_error(const char *what)
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

void agent_mark_own_thread(void)
{
    own_thread = 1;
}

jvm_thread *agent_take_thread(jthread thread)
{
    jvm_thread *jt = NULL;
    pthread_mutex_lock(&thread_lock);
    if ((*jvmti)->GetThreadLocalStorage(jvmti, thread, (void **)&jt) != JVMTI_ERROR_NONE)
        jt = NULL;
    if (jt)
        (*jvmti)->SetThreadLocalStorage(jvmti, thread, NULL);
    pthread_mutex_unlock(&thread_lock);
    return jt;
}

jvmtiEnv *agent_jvmti(void)
{
    return jvmti;
}

/* Under thread_lock: a thread announced twice (the main thread, by
 * ThreadStart and VMInit), or adopted by an attach while it announces
 * itself, is profiled once. */
static int has_thread(jthread thread)
{
    jvm_thread *jt = NULL;
    return (*jvmti)->GetThreadLocalStorage(jvmti, thread, (void **)&jt) != JVMTI_ERROR_NONE || jt;
}

/* Under thread_lock: jt's state is made by begin (the thread's own or an
 * adoption) and stored in thread's local storage. */
static void add_thread(jthread thread, jvm_thread *jt, int own)
{
    jt->state = own ? engine_thread_begin(jt)
                    : engine_thread_adopt(jt->tid, jt, jt->stack_lo, jt->stack_hi);
    /* Until this copy lands, a sample's stub step-out finds no stack and
     * that one sample is dropped: harmless, and it saves a second lookup. */
    if (own)
        engine_thread_stack(jt->state, &jt->stack_lo, &jt->stack_hi);
    if (jt->state && (*jvmti)->SetThreadLocalStorage(jvmti, thread, jt) == JVMTI_ERROR_NONE)
        return;
    /* The thread is gone (ended while being adopted): write what it has. */
    engine_thread_end(jt->state);
    free(jt);
}

static void begin_java_thread(JNIEnv *env, jthread thread)
{
    if (own_thread || !engine_active())
        return;
    jvm_thread *jt = calloc(1, sizeof(*jt));
    if (!jt)
        return;
    jt->env = env;
    jt->tid = gettid();   /* ThreadStart and VMInit run on the thread itself */
    pthread_mutex_lock(&thread_lock);
    if (has_thread(thread))
        free(jt);
    else
        add_thread(thread, jt, 1);
    pthread_mutex_unlock(&thread_lock);
}

void agent_adopt_thread(jthread thread, JNIEnv *env, pid_t tid, uint64_t stack_lo, uint64_t stack_hi)
{
    jvm_thread *jt = calloc(1, sizeof(*jt));
    if (!jt)
        return;
    *jt = (jvm_thread){ .env = env, .tid = tid, .stack_lo = stack_lo, .stack_hi = stack_hi };
    pthread_mutex_lock(&thread_lock);
    if (has_thread(thread))
        free(jt);
    else
        add_thread(thread, jt, 0);
    pthread_mutex_unlock(&thread_lock);
}

static void JNICALL on_thread_start(jvmtiEnv *env, JNIEnv *jni, jthread thread)
{
    (void)env;
    begin_java_thread(jni, thread);
}

/* A daemon, so the JVM never waits for it at exit. */
int jvm_attach_checkpoint_thread(void)
{
    JNIEnv *env;
    JavaVMAttachArgs args = { JNI_VERSION_1_6, "wasp checkpoints", NULL };
    own_thread = 1;
    return the_vm && (*the_vm)->AttachCurrentThreadAsDaemon(the_vm, (void **)&env, &args) == JNI_OK
               ? 0 : -1;
}

static void JNICALL on_thread_end(jvmtiEnv *env, JNIEnv *jni, jthread thread)
{
    (void)env;
    (void)jni;
    jvm_thread *jt = agent_take_thread(thread);
    if (!jt)
        return;
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

void jvm_each_loaded_class(jvmtiEnv *env, void (*fn)(jclass))
{
    jint count = 0;
    jclass *classes = NULL;
    if ((*env)->GetLoadedClasses(env, &count, &classes) == JVMTI_ERROR_NONE) {
        for (jint i = 0; i < count; i++)
            fn(classes[i]);
        (*env)->Deallocate(env, (unsigned char *)classes);
    }
}

static void JNICALL on_vm_init(jvmtiEnv *env, JNIEnv *jni, jthread thread)
{
    (void)env;
    jvm_each_loaded_class(jvmti, create_method_ids);
    /* The main thread started before ThreadStart events could reach us. */
    begin_java_thread(jni, thread);
    /* Only now can a thread of ours attach to the JVM to name frames. */
    engine_checkpoints_start();
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

int jvm_request_capabilities(jvmtiEnv *jvmti)
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
    return jvm_enable_events(jvmti, &cb, events, sizeof(events) / sizeof(events[0]));
}

int jvm_enable_events(jvmtiEnv *jvmti, const jvmtiEventCallbacks *cb, const jvmtiEvent *events, size_t n)
{
    if ((*jvmti)->SetEventCallbacks(jvmti, cb, sizeof(*cb)) != JVMTI_ERROR_NONE)
        return -1;
    for (size_t i = 0; i < n; i++)
        if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL) != JVMTI_ERROR_NONE)
            return -1;
    return 0;
}

/* Once per process: the JVMTI environment, capabilities and events. In
 * the live phase (attach) the code that exists already is replayed into
 * the code map, and method ids are made for the classes loaded so far. */
static int setup_jvmti(JavaVM *vm, int live, char *err, size_t errlen)
{
    static int done;
    if (done)
        return 0;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
        snprintf(err, errlen, "this JVM offers no JVMTI 1.2 environment");
        return -1;
    }
    if (jvm_stacks_init() < 0) {
        snprintf(err, errlen, "AsyncGetCallTrace not found — wasp needs a HotSpot JVM (OpenJDK, Temurin)");
        return -1;
    }
    if (codemap_init() < 0 || jvm_request_capabilities(jvmti) < 0) {
        snprintf(err, errlen, "the JVM refused the JVMTI capabilities wasp needs");
        return -1;
    }
    jvm_symbols_init(jvmti);
    the_vm = vm;
    if (enable_events() < 0) {
        snprintf(err, errlen, "cannot enable JVMTI events");
        return -1;
    }
    if (live) {
        jvm_each_loaded_class(jvmti, create_method_ids);
        (*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
        (*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
    }
    done = 1;
    return 0;
}

/* Samples in code outside the code cache ask libunwind for its bounds
 * (stacks.c). Its first use sets it up (locks, mmap): done here, not in a
 * handler. A fork (from JNI code; the JDK's own spawns do not run these
 * handlers) must not leave the child a loader lock a handler held. */
static void prepare_unwinder(void)
{
    ucontext_t here;
    code_bounds b;
    loader_lock_init();
    if (getcontext(&here) == 0)
        (void)native_code_bounds(&here, &b);
    pthread_atfork(native_unwind_before_fork, native_unwind_after_fork_parent, native_unwind_after_fork_child);
}

int agent_start(JavaVM *vm, const char *options, int live, char *err, size_t errlen)
{
    wasp_options o;
    options_defaults(&o);
    snprintf(o.dir, sizeof(o.dir), "wasp-%d", (int)getpid());
    if (options_parse(options, &o, err, errlen) < 0)
        return AGENT_BAD_OPTIONS;
    o.attached = live;
    if (engine_active()) {
        snprintf(err, errlen, "libwasp.so is already profiling this process natively (LD_PRELOAD)");
        return AGENT_NATIVE;
    }
    /* Events are enabled after engine_init at launch (no thread starts
     * before it); in a live JVM they are on from the first attach on, and
     * begin_java_thread waits for engine_active. */
    if (setup_jvmti(vm, live, err, errlen) < 0 || engine_init(&o, &jvm_frontend, err, errlen) < 0)
        return AGENT_START_FAILED;
    static pthread_once_t unwinder_once = PTHREAD_ONCE_INIT;   /* an attach may start the agent again */
    pthread_once(&unwinder_once, prepare_unwinder);
    /* At launch the checkpoint thread waits for VMInit (on_vm_init): only
     * then can it attach to the JVM. */
    if (live)
        engine_checkpoints_start();
    return 0;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    char err[512];
    (void)reserved;
    /* `wasp run --exact`: code maps for Valgrind's tool, nothing sampled. */
    if (options && !strcmp(options, "exact-maps") ? exactmaps_start(vm, err, sizeof(err)) < 0
                                                  : agent_start(vm, options, 0, err, sizeof(err)) != 0)
        agent_report_error(err);
    return JNI_OK;
}

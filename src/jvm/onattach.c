/*
 * onattach.c - a run started in a running JVM: Agent_OnAttach (`wasp
 * attach PID`), the threads that were running before it, and its end.
 *
 * `wasp attach` loads libwasp.so through HotSpot's attach mechanism, which
 * calls Agent_OnAttach(options) in the JVM's Attach Listener thread, once
 * per attach (the library stays loaded). options start a run, or "stop"
 * ends the active one early. A run profiles every Java thread alive at
 * attach time (adopted: vmthreads.c finds their tids) and every thread
 * started during it (ThreadStart, as at launch), and ends after its
 * duration (a timer thread of ours) or at "stop": sampling stops, every
 * thread's profile is written, their events closed, and the JVM runs on.
 * What the return code means for the CLI is attach_codes.h. Normal
 * context only.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "vmthreads.h"

static struct {
    pthread_mutex_t lock;     /* one start or stop at a time */
    pthread_cond_t wake;      /* a run ended: its timer need not wait */
    int cond_ready;
    int on;                   /* an attached run is active */
    unsigned generation;      /* counts runs, so a timer knows its own */
    struct timespec deadline; /* CLOCK_MONOTONIC */
    JavaVM *vm;
} run = { .lock = PTHREAD_MUTEX_INITIALIZER };

static JNIEnv *current_env(JavaVM *vm)
{
    JNIEnv *env = NULL;
    return (*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_6) == JNI_OK ? env : NULL;
}

/* f(env, thread) for every live Java thread. */
static void for_each_thread(JNIEnv *env, void (*f)(JNIEnv *, jthread))
{
    jvmtiEnv *jvmti = agent_jvmti();
    jint n = 0;
    jthread *threads = NULL;
    if ((*jvmti)->GetAllThreads(jvmti, &n, &threads) != JVMTI_ERROR_NONE)
        return;
    for (jint i = 0; i < n; i++) {
        f(env, threads[i]);
        (*env)->DeleteLocalRef(env, threads[i]);
    }
    (*jvmti)->Deallocate(jvmti, (unsigned char *)threads);
}

static void adopt_thread(JNIEnv *env, jthread thread)
{
    vm_thread_info vi;
    if (vmthreads_describe(env, thread, &vi) == 0)
        agent_adopt_thread(thread, vi.env, vi.tid, vi.stack_lo, vi.stack_hi);
}

/* After engine_shutdown wrote every profile: a thread that lives on gives
 * back its events and state. */
static void release_thread(JNIEnv *env, jthread thread)
{
    (void)env;
    jvm_thread *jt = agent_take_thread(thread);
    if (jt) {
        engine_thread_release(jt->state);
        free(jt);
    }
}

/* Under run.lock. */
static int stop_locked(JavaVM *vm)
{
    if (!run.on)
        return AGENT_NO_RUN;
    run.on = 0;
    run.generation++;
    pthread_cond_broadcast(&run.wake);
    engine_shutdown();
    JNIEnv *env = current_env(vm);
    if (env)
        for_each_thread(env, release_thread);
    return AGENT_OK;
}

static int stop_run(JavaVM *vm)
{
    pthread_mutex_lock(&run.lock);
    int rc = stop_locked(vm);
    pthread_mutex_unlock(&run.lock);
    return rc;
}

/* The run's timer: ends run generation gen at run.deadline, unless it
 * ended before. Joins the JVM only then, to call JVMTI. */
static void *timer_main(void *arg)
{
    unsigned gen = (unsigned)(uintptr_t)arg;
    JNIEnv *env;
    pthread_mutex_lock(&run.lock);
    while (run.on && run.generation == gen &&
           pthread_cond_timedwait(&run.wake, &run.lock, &run.deadline) != ETIMEDOUT)
        ;
    int due = run.on && run.generation == gen;
    pthread_mutex_unlock(&run.lock);
    if (!due)
        return NULL;
    agent_mark_own_thread();
    JavaVMAttachArgs args = { .version = JNI_VERSION_1_6, .name = "wasp attach timer", .group = NULL };
    if ((*run.vm)->AttachCurrentThreadAsDaemon(run.vm, (void **)&env, &args) != JNI_OK)
        return NULL;
    pthread_mutex_lock(&run.lock);
    if (run.on && run.generation == gen)
        stop_locked(run.vm);
    pthread_mutex_unlock(&run.lock);
    (*run.vm)->DetachCurrentThread(run.vm);
    return NULL;
}

static int start_timer(uint64_t duration_ns)
{
    pthread_attr_t attr;
    pthread_t th;
    if (!run.cond_ready) {
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&run.wake, &ca);
        pthread_condattr_destroy(&ca);
        run.cond_ready = 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &run.deadline);
    uint64_t ns = (uint64_t)run.deadline.tv_nsec + duration_ns % 1000000000ULL;
    run.deadline.tv_sec += (time_t)(duration_ns / 1000000000ULL + ns / 1000000000ULL);
    run.deadline.tv_nsec = (long)(ns % 1000000000ULL);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&th, &attr, timer_main, (void *)(uintptr_t)run.generation);
    pthread_attr_destroy(&attr);
    return rc == 0 ? 0 : -1;
}

static int start_locked(JavaVM *vm, const char *options)
{
    char err[512];
    wasp_options o;
    options_defaults(&o);
    if (run.on)
        return AGENT_RUN_ACTIVE;
    if (options_parse(options, &o, err, sizeof(err)) < 0)
        return AGENT_BAD_OPTIONS;
    int rc = agent_start(vm, options, 1, err, sizeof(err));
    if (rc == AGENT_START_FAILED)
        agent_report_error(err);
    if (rc != AGENT_OK)
        return rc;
    JNIEnv *env = current_env(vm);
    if (!env || vmthreads_init(env, agent_jvmti()) < 0) {
        engine_shutdown();
        return AGENT_NO_THREADS;
    }
    run.vm = vm;
    run.on = 1;
    run.generation++;
    if (o.duration_ns && start_timer(o.duration_ns) < 0) {
        stop_locked(vm);
        agent_report_error("cannot start the timer thread of `wasp attach`");
        return AGENT_START_FAILED;
    }
    for_each_thread(env, adopt_thread);
    return AGENT_OK;
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
    /* The JVM unloads a library whose Agent_OnAttach fails: ours is linked
     * -z nodelete, so a handler or timer of an earlier run stays valid. */
    (void)reserved;
    if (options && strcmp(options, "stop") == 0)
        return stop_run(vm);
    pthread_mutex_lock(&run.lock);
    int rc = start_locked(vm, options);
    pthread_mutex_unlock(&run.lock);
    return rc;
}

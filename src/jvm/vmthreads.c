/*
 * vmthreads.c - the native thread id, stack and JNIEnv of a running Java
 * thread, for a run started after the thread was (`wasp attach`).
 *
 * JVMTI names threads by java.lang.Thread objects only; perf events need
 * the kernel's thread id. HotSpot publishes the layout of its own
 * structures for its serviceability agent (gHotSpotVMStructs, exported by
 * libjvm.so on JDK 17 and 25): the Thread object's eetop field holds its
 * JavaThread, whose OSThread holds the tid, and whose stack base and size
 * bound its stack. Its JNIEnv is embedded in the JavaThread at one offset
 * for all threads, measured once on the calling thread. Normal context.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "vmthreads.h"

static struct {
    jfieldID eetop;
    long osthread, thread_id, stack_base, stack_size;   /* byte offsets, -1 unknown */
    intptr_t env;                                       /* JNIEnv - JavaThread */
    int ready;
} vm = { .osthread = -1, .thread_id = -1, .stack_base = -1, .stack_size = -1 };

static uint64_t exported(const char *name)
{
    const uint64_t *p = dlsym(RTLD_DEFAULT, name);
    return p ? *p : UINT64_MAX;
}

/* Fields move between JavaThread and Thread across JDK versions: either. */
static int thread_type(const char *t)
{
    return !strcmp(t, "Thread") || !strcmp(t, "JavaThread");
}

static void take_offset(const char *type, const char *field, long off)
{
    if (thread_type(type) && !strcmp(field, "_osthread")) vm.osthread = off;
    else if (thread_type(type) && !strcmp(field, "_stack_base")) vm.stack_base = off;
    else if (thread_type(type) && !strcmp(field, "_stack_size")) vm.stack_size = off;
    else if (!strcmp(type, "OSThread") && !strcmp(field, "_thread_id")) vm.thread_id = off;
}

static int read_vmstructs(void)
{
    char *const *table = dlsym(RTLD_DEFAULT, "gHotSpotVMStructs");
    uint64_t tn = exported("gHotSpotVMStructEntryTypeNameOffset");
    uint64_t fn = exported("gHotSpotVMStructEntryFieldNameOffset");
    uint64_t on = exported("gHotSpotVMStructEntryOffsetOffset");
    uint64_t stride = exported("gHotSpotVMStructEntryArrayStride");
    if (!table || !*table || tn == UINT64_MAX || fn == UINT64_MAX || on == UINT64_MAX ||
        stride == UINT64_MAX || stride == 0)
        return -1;
    for (const char *e = *table;; e += stride) {
        const char *type = *(const char *const *)(e + tn);
        const char *field = *(const char *const *)(e + fn);
        if (!type)
            break;
        if (field)
            take_offset(type, field, (long)*(const uint64_t *)(e + on));
    }
    return vm.osthread >= 0 && vm.thread_id >= 0 && vm.stack_base >= 0 && vm.stack_size >= 0 ? 0 : -1;
}

static char *java_thread_of(JNIEnv *env, jthread t)
{
    return (char *)(intptr_t)(*env)->GetLongField(env, t, vm.eetop);
}

int vmthreads_init(JNIEnv *env, jvmtiEnv *jvmti)
{
    jthread self;
    if (vm.ready)
        return 0;
    jclass cls = (*env)->FindClass(env, "java/lang/Thread");
    if (!cls || read_vmstructs() < 0)
        goto fail;
    vm.eetop = (*env)->GetFieldID(env, cls, "eetop", "J");
    if (!vm.eetop || (*jvmti)->GetCurrentThread(jvmti, &self) != JVMTI_ERROR_NONE)
        goto fail;
    char *me = java_thread_of(env, self);
    if (!me)
        goto fail;
    vm.env = (intptr_t)((char *)env - me);
    vm.ready = 1;
    return 0;
fail:
    if ((*env)->ExceptionCheck(env))
        (*env)->ExceptionClear(env);
    return -1;
}

int vmthreads_describe(JNIEnv *env, jthread t, vm_thread_info *out)
{
    char *jt = java_thread_of(env, t);   /* 0 once the thread has ended */
    if (!vm.ready || !jt)
        return -1;
    const char *os = *(char *const *)(jt + vm.osthread);
    if (!os)
        return -1;
    out->tid = *(const pid_t *)(os + vm.thread_id);
    uint64_t base = *(const uint64_t *)(jt + vm.stack_base);
    uint64_t size = *(const uint64_t *)(jt + vm.stack_size);
    out->stack_hi = base;
    out->stack_lo = base > size ? base - size : 0;
    out->env = (JNIEnv *)(jt + vm.env);
    return out->tid > 0 ? 0 : -1;
}

/*
 * jni_store.c - the native half of JniStore.java: one store instruction
 * whose value is silent for 3 elements in 4 (blocks of 64). Built with
 * -fno-tree-vectorize: one 4-byte store per element, as the analytic
 * fraction assumes.
 */
#include <jni.h>

JNIEXPORT void JNICALL Java_JniStore_update(JNIEnv *env, jclass cls, jintArray array, jintArray values)
{
    jint v[4];
    jsize n = (*env)->GetArrayLength(env, array);
    (void)cls;
    (*env)->GetIntArrayRegion(env, values, 0, 4, v);
    jint *a = (*env)->GetPrimitiveArrayCritical(env, array, NULL);
    if (!a)
        return;
    for (jsize i = 0; i < n; i++)
        a[i] = v[(i >> 6) & 3];
    (*env)->ReleasePrimitiveArrayCritical(env, array, a, 0);
}

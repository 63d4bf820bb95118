/*
 * JniStore.java - planted silent stores in native code a Java method calls
 * through JNI (wasp Java e2e test; the native half is jni_store.c).
 *
 * Plants: the native update() rewrites an int[4096] every round, like
 * SilentStore.update but in C: three blocks of 64 elements out of every
 * four receive the same value as last round (silent), the fourth the round
 * number. Nearly all of the thread's time is in that C loop, code outside
 * the JVM's code cache: a sample there must find its access from the C
 * function's bounds (the unwind tables), as in a native program.
 *
 * Analytic: 75% of the stored bytes are silent. Expected pair: the native
 * JniStore.update -> JniStore.update, JniStore.main at the call below it.
 */
public class JniStore {
    static final int N = 4096;
    static final int K = 12345;

    static native void update(int[] a, int[] v);

    public static void main(String[] args) {
        System.loadLibrary("waspjni");
        int[] a = new int[N];
        int[] v = { K, K, K, 0 };
        int rounds = 0;
        // A call takes microseconds: the budget's clock read costs little beside it.
        for (Budget budget = new Budget(args.length > 0 ? Double.parseDouble(args[0]) : 2.5); budget.more(); ) {
            v[3] = -(++rounds);
            update(a, v); // PLANT: jni-call
        }
        System.out.printf("JniStore done %d %d%n", rounds, a[N - 1]);
    }
}

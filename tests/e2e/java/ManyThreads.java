/*
 * ManyThreads.java - 1000 short-lived threads (wasp Java e2e robustness test).
 *
 * Starts 1000 threads named w0001..w1000, 8 at a time; each runs the
 * silent-store kernel of SilentStore.java (line "PLANT: many") for about
 * 3 ms of wall time and ends. Each thread's profile is written when it ends
 * (JVMTI ThreadEnd), or, when it found no pair, its counters are folded
 * into the process's ended-threads profile: every worker must be in one
 * of the two, none doubled; the JVM must exit 0 and print its last line.
 */
public class ManyThreads {
    static final int N = 4096;
    static final int COUNT = 1000;
    static final int BATCH = 8;

    static void update(int[] a, int[] v) {
        for (int i = 0; i < a.length; i++)
            a[i] = v[(i >> 6) & 3]; // PLANT: many
    }

    static void work() {
        int[] a = new int[N];
        int[] v = { 5, 5, 5, 0 };
        long end = System.nanoTime() + 3_000_000L;
        int r = 0;
        while (System.nanoTime() < end) {
            v[3] = -(++r);
            update(a, v);
        }
    }

    public static void main(String[] args) throws InterruptedException {
        int started = 0;
        for (int i = 0; i < COUNT; i += BATCH) {
            Thread[] batch = new Thread[Math.min(BATCH, COUNT - i)];
            for (int j = 0; j < batch.length; j++) {
                batch[j] = new Thread(ManyThreads::work, String.format("w%04d", i + j + 1));
                batch[j].start();
                started++;
            }
            for (Thread t : batch)
                t.join();
        }
        System.out.println("ManyThreads started " + started);
    }
}

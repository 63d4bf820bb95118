/*
 * AttachTarget.java - a JVM that wasp attaches to while it runs (wasp
 * attach e2e test, tests/e2e/attach.sh). Started without wasp.
 *
 * Plants: two worker threads, started before anything attaches, run the
 * silent-store loop of SilentStore.java: update() rewrites an int[4096]
 * every round with the one store at the line marked "PLANT:
 * attach-silent-store", three blocks in four with the same value as the
 * round before (75% of the stored bytes silent).
 *
 * Expected: a run attached while they work profiles both workers
 * (worker-0, worker-1: samples > 0, marked preexisting), and where
 * watchpoints trap, the pair AttachTarget.update:PLANT ->
 * AttachTarget.update:PLANT is at the top. The program prints "ready"
 * once its workers run and "done" when they ended, and exits with status
 * 7, with or without wasp.
 *
 *   AttachTarget SECS   workers run until a file "finish" appears in the
 *                       working directory, or SECS seconds passed
 */
public class AttachTarget {
    static final int N = 4096;
    static final int K = 12345;
    static volatile long sink;
    static volatile boolean finish;

    static void update(int[] a, int[] v) {
        for (int i = 0; i < a.length; i++)
            a[i] = v[(i >> 6) & 3]; // PLANT: attach-silent-store
    }

    static void work(long end) {
        int[] a = new int[N];
        int[] v = { K, K, K, 0 };
        int r = 0;
        while (!finish && System.nanoTime() < end) {
            for (int k = 0; k < 64; k++) {
                v[3] = -(++r);
                update(a, v); // PLANT: attach-update-call
            }
        }
        sink += a[N - 1];
    }

    public static void main(String[] args) throws InterruptedException {
        double secs = args.length > 0 ? Double.parseDouble(args[0]) : 20;
        long end = System.nanoTime() + (long) (secs * 1e9);
        Thread[] workers = new Thread[2];
        for (int w = 0; w < workers.length; w++) {
            workers[w] = new Thread(() -> work(end), "worker-" + w);
            workers[w].start();
        }
        System.out.println("ready");
        System.out.flush();
        java.io.File file = new java.io.File("finish");
        while (!file.exists() && System.nanoTime() < end)
            Thread.sleep(20);
        finish = true;
        for (Thread t : workers)
            t.join();
        System.out.println("done");
        System.exit(7);
    }
}

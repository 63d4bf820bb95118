/*
 * VirtualThreads.java - the planted silent store of SilentStore.java run in
 * 16 virtual threads (wasp Java e2e test, JDK 21 and later).
 *
 * Virtual threads run mounted on a few carrier threads (ForkJoinPool
 * workers), which are the threads the OS, perf events and JVMTI's
 * ThreadStart know; a virtual thread's frames sit on its carrier's stack
 * below Continuation.enterSpecial while it runs. Each virtual thread
 * yields every 64 rounds, so they take turns on the carriers and move
 * between them.
 *
 * Plants: as SilentStore.java, 75% of update()'s stored bytes are silent,
 * each virtual thread with arrays of its own. Expected pair:
 * VirtualThreads.update:PLANT -> the same, VirtualThreads.work below it.
 * Built with --release 17 like every test program: the executor is looked
 * up by reflection.
 */
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

public class VirtualThreads {
    static final int N = 4096;
    static final int K = 12345;

    static void update(int[] a, int[] v) {
        for (int i = 0; i < a.length; i++)
            a[i] = v[(i >> 6) & 3]; // PLANT: vthreads
    }

    static int work(double secs) {
        int[] a = new int[N];
        int[] v = { K, K, K, 0 };
        Budget budget = new Budget(secs);
        int r = 0;
        while (budget.more()) {
            for (int k = 0; k < 64; k++) {
                v[3] = -(++r);
                update(a, v); // PLANT: vthreads-call
            }
            Thread.yield();
        }
        return r;
    }

    public static void main(String[] args) throws Exception {
        double secs = args.length > 0 ? Double.parseDouble(args[0]) : 2.5;
        ExecutorService ex = (ExecutorService) Executors.class
            .getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        for (int t = 0; t < 16; t++)
            ex.submit(() -> work(secs));
        ex.shutdown();
        if (!ex.awaitTermination(600, TimeUnit.SECONDS))
            throw new IllegalStateException("virtual threads did not finish");
        System.out.println("VirtualThreads done");
    }
}

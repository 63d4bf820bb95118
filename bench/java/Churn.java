/*
 * Churn.java - a thread per task (bench/threads.sh): starts N threads one
 * after another, each a few microseconds of work, and prints the wall time
 * the N took ("ms N").
 */
public class Churn {
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            Thread t = new Thread(() -> {
                int[] a = new int[256];
                for (int k = 0; k < 2000; k++)
                    a[k & 255] = k;
                sink += a[3];
            });
            t.start();
            t.join();
        }
        System.out.println("ms " + (System.nanoTime() - t0) / 1000000);
    }
}

/*
 * Threads.java - the same planted silent store in 4 threads, which the
 * report must merge into one pair (wasp Java e2e test).
 *
 * Plants: 4 threads of the nested class Threads$Worker each run update() on
 * their own int[4096] array, exactly as SilentStore.java does: the one
 * store at the line marked "PLANT: threads" writes the loop-invariant K to
 * three blocks of 64 elements out of four (silent: the value of the previous
 * round) and the round number to the fourth (not silent), decided by the
 * data. The main thread only waits.
 *
 * Analytic: 75% silent, site and program fraction. The report must hold the
 * pair Threads.update:PLANT -> Threads.update:PLANT (Threads$Worker.run
 * below it) once, with a count equal to the sum of the counts of that pair
 * in the per-thread profiles, of which at least 4 must hold it.
 * Each worker prints its CPU time ("cpu NAME NANOS"): its profile must
 * hold about one sample per sampling period of it (the per-thread timer
 * works in every thread).
 */
import java.lang.management.ManagementFactory;

public class Threads {
    static final int N = 4096;
    static final int K = 777;

    static void update(int[] a, int[] v) {
        for (int i = 0; i < a.length; i++)
            a[i] = v[(i >> 6) & 3]; // PLANT: threads
    }

    static final class Worker extends Thread {
        final double secs;
        int rounds;
        long cpuNanos;

        Worker(String name, double secs) {
            super(name);
            this.secs = secs;
        }

        @Override
        public void run() {
            int[] a = new int[N];
            int[] v = { K, K, K, 0 };
            Budget budget = new Budget(secs);
            while (budget.more()) {
                for (int k = 0; k < 64; k++) {
                    v[3] = -(++rounds);
                    update(a, v); // PLANT: threads-call
                }
            }
            cpuNanos = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
        }
    }

    public static void main(String[] args) throws InterruptedException {
        double secs = args.length > 0 ? Double.parseDouble(args[0]) : 2.5;
        Worker[] ws = new Worker[4];
        for (int i = 0; i < ws.length; i++) {
            ws[i] = new Worker("worker-" + i, secs);
            ws[i].start();
        }
        long total = 0;
        for (Worker w : ws) {
            w.join();
            total += w.rounds;
        }
        for (Worker w : ws)
            System.out.println("cpu " + w.getName() + " " + w.cpuNanos);
        System.out.println("Threads done " + total);
    }
}

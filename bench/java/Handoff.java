/*
 * Handoff.java - two threads that hand work to each other (bench/switches.sh),
 * as a server's acceptor and workers do: N exchanges through a
 * SynchronousQueue each way, a little work per exchange, after a warm-up
 * of the same; prints the wall time of the N ("ms N").
 */
import java.util.concurrent.SynchronousQueue;

public class Handoff {
    static volatile long sink;

    static void work(long[] a) {
        for (int k = 0; k < 200; k++)
            a[k & 63] = k;
        sink += a[5];
    }

    static long rounds(int n) throws Exception {
        SynchronousQueue<Integer> there = new SynchronousQueue<>(), back = new SynchronousQueue<>();
        Thread worker = new Thread(() -> {
            long[] a = new long[64];
            try {
                for (int i = 0; i < n; i++) {
                    Integer v = there.take();
                    work(a);
                    back.put(v);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "handoff-worker");
        worker.start();
        long[] a = new long[64];
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            work(a);
            there.put(i);
            back.take();
        }
        long ns = System.nanoTime() - t0;
        worker.join();
        return ns;
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        rounds(n / 4);
        System.out.println("ms " + rounds(n) / 1000000);
    }
}

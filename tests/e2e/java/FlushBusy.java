/*
 * FlushBusy.java - busy threads that run until stopped (wasp e2e, flush.sh).
 *
 * Usage: java FlushBusy THREADS SECONDS exit|wait [CPU_FILE]
 *   THREADS threads ("busy-0", ...) store into arrays of their own for
 *   SECONDS seconds of wall-clock time; then the program returns normally
 *   ("exit"). With "wait" they run on until the JVM is killed, and main
 *   rewrites CPU_FILE every second with one line per busy thread, "NAME
 *   CPU_NS": what each had used by then, for the test to compare with the
 *   checkpoints.
 *
 * Plants nothing: tests/e2e/flush.sh checks that the checkpoints of a
 * killed JVM hold most of each thread's samples.
 */
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

public class FlushBusy {
    static volatile long sink;

    static void fill(long[] a, long r) {
        for (int i = 0; i < a.length; i++)
            a[i] = (i & 64) != 0 ? r : 7;
    }

    /* Written aside and moved: the test never reads half a file. */
    static void writeCpu(Path path, Thread[] threads) throws Exception {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        StringBuilder sb = new StringBuilder();
        for (Thread t : threads)
            sb.append(t.getName()).append(' ').append(mx.getThreadCpuTime(t.getId())).append('\n');
        Path tmp = Path.of(path + ".tmp");
        Files.writeString(tmp, sb.toString());
        Files.move(tmp, path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        boolean wait = args[2].equals("wait");
        long end = wait ? Long.MAX_VALUE : System.nanoTime() + (long) (Double.parseDouble(args[1]) * 1e9);
        Thread[] threads = new Thread[n];
        for (int k = 0; k < n; k++) {
            threads[k] = new Thread(() -> {
                long[] a = new long[4096];
                for (long r = 0; System.nanoTime() < end; r++)
                    fill(a, r);
                sink += a[1];
            }, "busy-" + k);
            threads[k].start();
        }
        if (wait) {
            Path cpu = args.length > 3 ? Path.of(args[3]) : null;
            for (;;) {
                Thread.sleep(1000);
                if (cpu != null)
                    writeCpu(cpu, threads);
            }
        }
        for (Thread t : threads)
            t.join();
        System.out.println("FlushBusy: " + n + " threads");
    }
}

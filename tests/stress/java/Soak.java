/*
 * Soak.java - a JVM under GC pressure for a long time (tests/stress/run:
 * java_soak). Four workers build and drop linked structures, maps and
 * arrays in a small heap (the suite runs it with -Xmx96m), so young and
 * full collections run all the time while wasp samples; a churn thread
 * starts a short-lived worker every 50 ms. Usage: java Soak SECONDS.
 *
 * stdout does not depend on the duration (the suite compares it with a
 * shorter unprofiled run); stderr gets "#fact javathreads NAME..." with
 * the name of every thread the program started, each of which must have
 * exactly one profile.
 */
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public class Soak {
    static final class Node {
        final long value;
        Node next;
        int[] payload;
        Node(long value, Node next) {
            this.value = value;
            this.next = next;
            this.payload = new int[(int) (value & 63)];
        }
    }

    static volatile long deadline;
    static final List<String> names = new ArrayList<>();

    static long churnObjects(long seed) {
        Node head = null;
        Map<Long, Node> index = new HashMap<>();
        long sum = 0;
        for (int i = 0; i < 20000; i++) {
            head = new Node(seed + i, head);
            if ((i & 7) == 0)
                index.put(seed + i, head);
        }
        for (Node n = head; n != null; n = n.next) {
            n.payload = new int[n.payload.length + 1];
            sum += n.value + n.payload.length;
        }
        return sum + index.size();
    }

    static void work() {
        long seed = Thread.currentThread().getName().hashCode();
        while (System.nanoTime() < deadline)
            seed += churnObjects(seed) & 1023;
    }

    static Thread start(String name, Runnable r) {
        Thread t = new Thread(r, name);
        synchronized (names) {
            names.add(name);
        }
        t.start();
        return t;
    }

    public static void main(String[] args) throws InterruptedException {
        double secs = args.length > 0 ? Double.parseDouble(args[0]) : 60;
        deadline = System.nanoTime() + (long) (secs * 1e9);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 4; i++)
            threads.add(start("soak-w" + i, Soak::work));
        Thread churn = start("soak-churn", () -> {
            for (int i = 0; System.nanoTime() < deadline; i++) {
                Thread t = start(String.format("soak-short%05d", i), () -> churnObjects(7));
                try {
                    t.join();
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        threads.add(churn);
        for (Thread t : threads)
            t.join();
        System.out.println("Soak: 4 workers and the churn thread finished");
        synchronized (names) {
            System.err.println("#fact javathreads " + String.join(" ", names));
        }
    }
}

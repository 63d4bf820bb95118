/*
 * SpeedSplit.java - a planted case of the sampler's one bias that no
 * within-region draw removes (docs/accuracy.md, "A planted case"): two
 * loops whose passes take different time. total() stores a boolean that is
 * already false (a silent store, 1 byte) on every pass; histogram() counts
 * random values into 257 buckets (a read-modify-write, 4 bytes, never
 * silent), whose passes are slower. By bytes the truth is 204,800 silent of
 * 204,800 + 262,144: 43.9% (the exact mode reads 43.6% with the JVM's own
 * stores); a timer gives histogram()'s slower passes more samples.
 *
 * Usage: java SpeedSplit [seconds]   runs both loops for that long (default 6)
 *        java SpeedSplit time        prints what one call of each takes
 */
import java.util.Random;

public class SpeedSplit {
    static final class Item { long price; int qty; boolean dirty; }

    static long total(Item[] items, int rounds) {
        long sum = 0;
        for (int r = 0; r < rounds; r++) {
            for (Item it : items) {
                it.dirty = false;                 // PLANT: silent store
                sum += it.price * it.qty;
            }
        }
        return sum;
    }

    static int[] histogram(int[] data, int buckets) {
        int[] h = new int[buckets];
        for (int d : data) h[Math.floorMod(d, buckets)]++;
        return h;
    }

    public static void main(String[] args) {
        int n = 4096;
        Item[] items = new Item[n];
        Random rnd = new Random(1);
        for (int i = 0; i < n; i++) {
            items[i] = new Item();
            items[i].price = rnd.nextInt(1000);
            items[i].qty = 1 + rnd.nextInt(5);
        }
        int[] data = new int[1 << 16];
        for (int i = 0; i < data.length; i++) data[i] = rnd.nextInt();
        long s = 0;
        if (args.length > 0 && args[0].equals("time")) {
            long tt = 0, th = 0;
            for (int k = 0; k < 3000; k++) {
                long t0 = System.nanoTime();
                s += total(items, 50);
                long t1 = System.nanoTime();
                s += histogram(data, 257)[3];
                long t2 = System.nanoTime();
                if (k >= 1000) { tt += t1 - t0; th += t2 - t1; }   /* compiled by then */
            }
            System.out.println("total " + tt / 2000 + " ns, histogram " + th / 2000 + " ns a call (" + s + ")");
            return;
        }
        long end = System.nanoTime() + Long.parseLong(args.length > 0 ? args[0] : "6") * 1_000_000_000L;
        while (System.nanoTime() < end) {
            s += total(items, 50);
            s += histogram(data, 257)[3];
        }
        System.out.println(s);
    }
}

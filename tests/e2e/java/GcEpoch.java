/*
 * GcEpoch.java - no pair may span a garbage collection (wasp Java e2e
 * robustness test, silent-load mode).
 *
 * Plants: each cycle allocates 2^20 small Box objects (and the array holding
 * them), reads every Box twice with readA() (line "PLANT: gc-read-a"),
 * drops them and calls System.gc(); then does the same with fresh objects
 * holding the same values and readB() (line "PLANT: gc-read-b"), and
 * System.gc() again. The collector empties the young generation, so the new
 * objects are allocated at the addresses the old ones had.
 *
 * A watch armed during the second pass of readA() has no access left before
 * the collection. If it survived it, the first pass of readB() would load
 * the same address and the same value: a silent pair readA -> readB (or
 * readB -> readA) that spans a GC. wasp must retire such watches at
 * GarbageCollectionStart: the report must hold no pair between readA and
 * readB, and stats drop.epoch must be > 0 (watches were retired). The pair
 * readA -> readA (first pass to second pass, same objects, no GC between)
 * shows that the profiler did watch these loads.
 */
public class GcEpoch {
    static final int N = 1 << 20;

    static final class Box {
        final int v;

        Box(int v) {
            this.v = v;
        }
    }

    static Box[] make() {
        Box[] bs = new Box[N];
        for (int i = 0; i < N; i++)
            bs[i] = new Box(i & 1023);
        return bs;
    }

    static long readA(Box[] bs) {
        long s = 0;
        for (Box b : bs)
            s += b.v; // PLANT: gc-read-a
        return s;
    }

    static long readB(Box[] bs) {
        long s = 0;
        for (Box b : bs)
            s += b.v; // PLANT: gc-read-b
        return s;
    }

    public static void main(String[] args) {
        double secs = args.length > 0 ? Double.parseDouble(args[0]) : 2.5;
        long end = System.nanoTime() + (long) (secs * 1e9);
        long s = 0;
        int cycles = 0;
        while (System.nanoTime() < end) {
            Box[] a = make();
            s += readA(a);
            s += readA(a);
            a = null;
            System.gc();
            Box[] b = make();
            s += readB(b);
            s += readB(b);
            b = null;
            System.gc();
            cycles++;
        }
        System.out.println("GcEpoch cycles " + cycles + " " + s);
    }
}

/*
 * ListRefill.java - planted dead stores inside a JDK collection: an
 * ArrayList cleared and refilled (wasp Java e2e test).
 *
 * Plants: round() calls list.clear() (line "PLANT: clear-call"), refills the
 * list with 4096 list.add() (line "PLANT: add-call"), then reads back only
 * the odd blocks of 64 elements with list.get() (line "PLANT: list-read").
 *
 *  - ArrayList.clear() stores null into every slot (es[i] = null); the next
 *    add() overwrites the slot with no load in between: every sampled store
 *    of clear() is dead. Pair: java.util.ArrayList.clear -> ArrayList.add
 *    (the private add(E, Object[], int), line of "elementData[s] = e"), with
 *    ListRefill.round at the clear-call line under the watch and
 *    ArrayList.add(E) and ListRefill.round at the add-call line under the
 *    trap. Analytic site fraction of clear()'s store: 100%.
 *  - add()'s element store is read by get() for the odd blocks (not dead)
 *    and overwritten by the next clear() for the even blocks (dead), decided
 *    by the data (the block), not by the unrolled position. Analytic site
 *    fraction of add()'s element store: 50%.
 *  - add() also stores modCount and size, which the next add() reads: 0%.
 *
 * The program fraction mixes these sites in proportion to the CPU time spent
 * at each (software samples are time-weighted), so it has no analytic value;
 * it must lie between the lowest and highest site values, and the test
 * states the range it measured (see docs/testing.md). The Integer elements
 * are allocated once, so the loop allocates nothing and no GC interferes.
 */
import java.util.ArrayList;

public class ListRefill {
    static final int N = 4096;

    static long round(ArrayList<Integer> list, Integer[] pool) {
        list.clear(); // PLANT: clear-call
        for (int i = 0; i < N; i++)
            list.add(pool[i]); // PLANT: add-call
        long s = 0;
        for (int b = 64; b < N; b += 128)
            for (int i = b; i < b + 64; i++)
                s += list.get(i); // PLANT: list-read
        return s;
    }

    public static void main(String[] args) {
        double secs = args.length > 0 ? Double.parseDouble(args[0]) : 2.5;
        Integer[] pool = new Integer[N];
        for (int i = 0; i < N; i++)
            pool[i] = Integer.valueOf(1000 + i);
        ArrayList<Integer> list = new ArrayList<>(N);
        long end = System.nanoTime() + (long) (secs * 1e9);
        long s = 0;
        while (System.nanoTime() < end) {
            for (int k = 0; k < 16; k++)
                s += round(list, pool);
        }
        System.out.println("ListRefill done " + s);
    }
}

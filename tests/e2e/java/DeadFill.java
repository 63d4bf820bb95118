/*
 * DeadFill.java - planted dead stores inside a JDK method, Arrays.fill
 * (wasp Java e2e test).
 *
 * Plants: round() refills the whole int[4096] array with Arrays.fill (the
 * call at the line marked "PLANT: fill-call"); consume() then reads only the
 * odd blocks of 64 elements (line "PLANT: fill-read", loads only). So the
 * stores that Arrays.fill makes to the even blocks are overwritten by the
 * next round's Arrays.fill with no load in between (dead), and those to the
 * odd blocks are read first (not dead). Which kind a store is depends on the
 * data (its block), not on which of Arrays.fill's store instructions did it
 * (C2's vectorised loop on JDK 17, the fill stub on JDK 25).
 *
 * Analytic: 50% of Arrays.fill's stored bytes are dead, and since
 * Arrays.fill makes (nearly) all the stores of the program, the program
 * fraction is 50% too.
 *
 * Expected pair: java.util.Arrays.fill (Arrays.java, the line of its store,
 * found with javap) -> the same, with DeadFill.round at the fill-call line
 * below it on both sides (the JDK frame is attributed through the caller).
 * The non-dead pair java.util.Arrays.fill -> DeadFill.consume at the
 * fill-read line must be in the report too.
 */
import java.util.Arrays;

public class DeadFill {
    static final int N = 4096;

    static long round(int[] a, int r) {
        Arrays.fill(a, r); // PLANT: fill-call
        return consume(a);
    }

    /* Loads only: reads the odd blocks of 64 elements. */
    static long consume(int[] a) {
        long s = 0;
        for (int b = 64; b < a.length; b += 128)
            for (int i = b; i < b + 64; i++)
                s += a[i]; // PLANT: fill-read
        return s;
    }

    public static void main(String[] args) {
        double secs = args.length > 0 ? Double.parseDouble(args[0]) : 2.5;
        int[] a = new int[N];
        Budget budget = new Budget(secs);
        long s = 0;
        int r = 0;
        while (budget.more()) {
            for (int k = 0; k < 64; k++)
                s += round(a, ++r); // PLANT: round-call
        }
        System.out.println("DeadFill done " + s);
    }
}

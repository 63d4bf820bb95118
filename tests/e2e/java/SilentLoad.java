/*
 * SilentLoad.java - planted silent loads: a repeated linear search (wasp Java e2e test).
 *
 * Plants: search() looks for a key that is never present, over the whole
 * int[4096] array, once per round; its one source-level load is the line
 * marked "PLANT: silent-load" (C2 unrolls it into several load instructions,
 * all on that line).
 *
 *   SilentLoad const SECS  the array never changes: every load of a[i] reads
 *                          the value the previous search read. Analytic: 100%
 *                          of search()'s loaded bytes are silent, and the
 *                          program fraction is ~100% (the only other loads,
 *                          safepoint polls and loop bookkeeping, are silent
 *                          too).
 *   SilentLoad half SECS   between two searches mutate() (stores only, no
 *                          loads) rewrites the odd blocks of 64 elements with
 *                          new values; the even blocks never change. The
 *                          searched array is the same, so whether a load is
 *                          silent depends on the data (the block of i), not on
 *                          which unrolled load instruction did it: every load
 *                          instruction of search() sees both kinds of element
 *                          equally. Analytic: 50% of search()'s loaded bytes
 *                          are silent (the "site" fraction, over the pairs
 *                          whose watch is at the PLANT line). The program
 *                          fraction is a little above 50%: the few other loads
 *                          (safepoint polls, spills) are silent.
 *
 * Expected pair: SilentLoad.search:PLANT -> SilentLoad.search:PLANT, with
 * SilentLoad.main below it, at the top of the report.
 *
 * Run it with -XX:CompileCommand=quiet
 * -XX:CompileCommand=dontinline,SilentLoad::mutate (tests/e2e/java.sh does):
 * inlined into the OSR compilation of main(), mutate()'s loop sometimes
 * (2 runs in 5 on JDK 17) got its bound spilled to the stack and reloaded by
 * "cmp (%rsp), %eax" every iteration, silent loads that are not planted and
 * outweighed search() in the report. Compiled on its own, it has no loads.
 * A round takes a few microseconds, far below the 1 ms sampling period, so
 * every armed watch traps (at the next search) before it is replaced.
 */
public class SilentLoad {
    static final int N = 4096;

    static int search(int[] a, int key) {
        for (int i = 0; i < a.length; i++) {
            if (a[i] == key) // PLANT: silent-load
                return i;
        }
        return -1;
    }

    /* Stores only: rewrites the odd blocks of 64 elements with new values. */
    static void mutate(int[] a, int v) {
        for (int j = 0; j < N / 2; j++)
            a[((j >> 6) << 7) + 64 + (j & 63)] = (v + j) & 0x7fffffff;
    }

    public static void main(String[] args) {
        boolean half = args.length > 0 && args[0].equals("half");
        double secs = args.length > 1 ? Double.parseDouble(args[1]) : 2.5;
        int[] a = new int[N];
        for (int i = 0; i < N; i++)
            a[i] = i;
        Budget budget = new Budget(secs);
        long found = 0;
        int r = 0;
        while (budget.more()) {
            for (int k = 0; k < 64; k++) {
                found += search(a, -1); // PLANT: search-call
                if (half)
                    mutate(a, ++r * N);
            }
        }
        System.out.println("SilentLoad " + (half ? "half" : "const") + " done " + found);
    }
}

/*
 * SilentStore.java - planted silent stores: a loop-invariant value stored on
 * every iteration (wasp Java e2e test).
 *
 * Plants: update() rewrites the whole int[4096] array every round with the
 * one store at the line marked "PLANT: silent-store". The stored value is
 * v[(i >> 6) & 3] with v = {K, K, K, -r}: three blocks of 64 elements out of
 * every four receive the loop-invariant K (the same value as in the previous
 * round: silent), the fourth the round number (a new value: not silent).
 * Whether a store is silent depends on the data (the block of i), so each of
 * the store instructions C2 unrolls the loop into sees both kinds equally.
 *
 * Analytic: 75% of update()'s stored bytes are silent (site fraction), and
 * the program fraction is 75% too: the only other store, v[3] = -r once per
 * 4096 stores, is negligible.
 *
 * Expected pair: SilentStore.update:PLANT -> SilentStore.update:PLANT, with
 * SilentStore.main below it, at the top of the report. A round takes a few
 * microseconds, far below the 1 ms sampling period.
 */
public class SilentStore {
    static final int N = 4096;
    static final int K = 12345;

    static void update(int[] a, int[] v) {
        for (int i = 0; i < a.length; i++)
            a[i] = v[(i >> 6) & 3]; // PLANT: silent-store
    }

    public static void main(String[] args) {
        double secs = args.length > 0 ? Double.parseDouble(args[0]) : 2.5;
        int[] a = new int[N];
        int[] v = { K, K, K, 0 };
        Budget budget = new Budget(secs);
        int r = 0;
        while (budget.more()) {
            for (int k = 0; k < 64; k++) {
                v[3] = -(++r);
                update(a, v); // PLANT: update-call
            }
        }
        System.out.println("SilentStore done " + r + " " + a[4095]);
    }
}

/*
 * Exits.java - JVMs that end abnormally must still leave a complete,
 * readable profile (wasp Java e2e robustness test, silent-store mode).
 *
 * Runs the silent-store kernel of SilentStore.java (line "PLANT: exits",
 * 75% silent) and then, by its first argument:
 *   exit SECS   calls System.exit(3) after SECS seconds (exit status 3)
 *   throw SECS  throws an uncaught IllegalStateException (exit status 1)
 *   spin SECS   runs until it is killed (the test sends SIGTERM after 1 s)
 * Each must leave a profile that `wasp report` reads, with samples > 0 and
 * the planted pair Exits.update -> Exits.update in it.
 */
public class Exits {
    static final int N = 4096;

    static void update(int[] a, int[] v) {
        for (int i = 0; i < a.length; i++)
            a[i] = v[(i >> 6) & 3]; // PLANT: exits
    }

    public static void main(String[] args) {
        String how = args.length > 0 ? args[0] : "exit";
        double secs = args.length > 1 ? Double.parseDouble(args[1]) : 1.5;
        int[] a = new int[N];
        int[] v = { 9, 9, 9, 0 };
        long end = how.equals("spin") ? Long.MAX_VALUE : System.nanoTime() + (long) (secs * 1e9);
        int r = 0;
        System.out.println("Exits " + how + " running pid=" + ProcessHandle.current().pid());
        System.out.flush();
        while (System.nanoTime() < end) {
            for (int k = 0; k < 64; k++) {
                v[3] = -(++r);
                update(a, v);
            }
        }
        if (how.equals("throw"))
            throw new IllegalStateException("planted uncaught exception after " + r + " rounds");
        System.exit(3);
    }
}

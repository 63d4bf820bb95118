/*
 * Budget.java - how long a planted program runs (wasp Java e2e tests).
 *
 * Wall-clock seconds for the sampled tests (java.sh), or, with
 * -Dwasp.rounds=N, exactly N rounds for the exact mode (exact_java.sh):
 * under Valgrind a time budget would measure the machine's load rather than
 * the program, and the fractions depend on how much of the run is the
 * planted loop. more() is asked once per round, as often as the programs
 * read the clock before; its one counter store is negligible next to a
 * round's thousands.
 */
final class Budget {
    private final long end;
    private final long rounds;
    private long done;

    Budget(double secs) {
        rounds = Long.getLong("wasp.rounds", 0);
        end = System.nanoTime() + (long) (secs * 1e9);
    }

    boolean more() {
        return rounds > 0 ? done++ < rounds : System.nanoTime() < end;
    }
}

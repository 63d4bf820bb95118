/*
 * Bias.java - planted programs where a time-weighted sampler is biased
 * (issue 12 item 4, Java side; wasp Java e2e tests, silent-store mode).
 *
 * In each case waste and useful work sit on different store instructions,
 * so a sampler that picks an access by where the timer lands, rather than
 * by how often each access runs, misses the analytic fraction. The exact
 * mode (exact_java.sh) must hit it within 1 point; the sampled mode
 * (java.sh, where debug registers fire) within 5 points of both.
 *
 *   two-stores  one loop body, two int stores: a[i] = K (silent: the same
 *               value every round) and b[i] = round (new every round).
 *               Analytic: 50%.
 *   fp-mul      one loop body: s[i] = x[i] * m * m * m (a chain of
 *               long-latency multiplies, m = 1.0, so a silent double store
 *               right after them) and c[i] = round (a new long). Analytic:
 *               50% (8 bytes each).
 *   odd-even    one array, even elements get K (silent), odd elements the
 *               round (new): a[i] = K; a[i + 1] = round. Analytic: 50%.
 *   ratio       three silent int stores (one source line, a loop of three
 *               that C2 unrolls) for each new int store on another line.
 *               Analytic: 75%.
 *
 * The silent store's line carries "PLANT: bias-<case>": its pair (that
 * line -> that line, Bias.<method> above Bias.main) comes first. A round
 * rewrites N elements; Budget decides how many rounds run.
 */
public class Bias {
    static final int N = 4096;
    static final int K = 4242;
    /* 1.0, read from a field so that C2 cannot fold the multiplies away. */
    static double unit = 1.0;

    static void twoStores(int[] a, int[] b, int r) {
        for (int i = 0; i < N; i++) {
            a[i] = K; // PLANT: bias-two-stores
            b[i] = r;
        }
    }

    static void fpMul(double[] s, double[] x, long[] c, double m, long r) {
        for (int i = 0; i < N; i++) {
            s[i] = x[i] * m * m * m; // PLANT: bias-fp-mul
            c[i] = r;
        }
    }

    static void oddEven(int[] a, int r) {
        for (int i = 0; i < N; i += 2) {
            a[i] = K; // PLANT: bias-odd-even
            a[i + 1] = r;
        }
    }

    static void ratio(int[] a, int[] b, int r) {
        for (int j = 0; j < N / 4; j++) {
            for (int k = 0; k < 3; k++)
                a[3 * j + k] = K; // PLANT: bias-ratio
            b[j] = r;
        }
    }

    public static void main(String[] args) {
        String which = args.length > 0 ? args[0] : "two-stores";
        double secs = args.length > 1 ? Double.parseDouble(args[1]) : 2.5;
        int[] a = new int[N], b = new int[N];
        double[] s = new double[N], x = new double[N];
        long[] c = new long[N];
        for (int i = 0; i < N; i++)
            x[i] = 1.5 + i;
        Budget budget = new Budget(secs);
        int r = 0;
        while (budget.more()) {
            for (int k = 0; k < 64; k++) {
                r++;
                switch (which) {
                case "two-stores": twoStores(a, b, r); break; // PLANT: call-two-stores
                case "fp-mul": fpMul(s, x, c, unit, r); break; // PLANT: call-fp-mul
                case "odd-even": oddEven(a, r); break; // PLANT: call-odd-even
                case "ratio": ratio(a, b, r); break; // PLANT: call-ratio
                default: throw new IllegalArgumentException("unknown case " + which);
                }
            }
        }
        System.out.println("Bias " + which + " done " + r + " " + a[N - 1] + " " + b[N / 4 - 1] + " " + s[N - 1]
                           + " " + c[N - 1]);
    }
}

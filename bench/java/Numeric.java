/*
 * Numeric.java - a numeric array kernel for bench/java.sh.
 *
 * A 2-D Jacobi stencil on double arrays (allocation-free once warm), then a
 * blocked matrix multiply and an integer prefix-sum pass: tight JIT-compiled
 * loops over primitive arrays, where the agent's cost is almost all sampling
 * and watchpoint traps. Usage: java -cp build/bench/java Numeric [iterations]
 */
public class Numeric {
    public static void main(String[] args) {
        int iters = args.length > 0 ? Integer.parseInt(args[0]) : 20000;
        final int n = 512;
        double[] a = new double[n * n], b = new double[n * n];
        for (int i = 0; i < n; i++) {
            a[i] = 1.0;                 // hot top edge
            b[i] = 1.0;
        }
        for (int it = 0; it < iters; it++) {
            jacobi(a, b, n);
            double[] t = a; a = b; b = t;
        }
        double m = matmul(256, 80);
        long p = prefix(1 << 20, 2000);
        System.out.printf("numeric: %d iterations, centre %.6f, matmul %.3f, prefix %d%n",
                          iters, a[(n / 2) * n + n / 2], m, p);
    }

    static void jacobi(double[] src, double[] dst, int n) {
        for (int y = 1; y < n - 1; y++) {
            int row = y * n;
            for (int x = 1; x < n - 1; x++) {
                int i = row + x;
                dst[i] = 0.25 * (src[i - 1] + src[i + 1] + src[i - n] + src[i + n]);
            }
        }
    }

    static double matmul(int n, int reps) {
        double[] x = new double[n * n], y = new double[n * n], z = new double[n * n];
        for (int i = 0; i < n * n; i++) {
            x[i] = (i % 17) * 0.5;
            y[i] = (i % 13) * 0.25;
        }
        for (int r = 0; r < reps; r++)
            for (int i = 0; i < n; i++)
                for (int k = 0; k < n; k++) {
                    double xik = x[i * n + k];
                    for (int j = 0; j < n; j++)
                        z[i * n + j] += xik * y[k * n + j];
                }
        return z[n * n / 2];
    }

    static long prefix(int n, int reps) {
        int[] v = new int[n];
        for (int i = 0; i < n; i++)
            v[i] = i & 255;
        long s = 0;
        for (int r = 0; r < reps; r++) {
            for (int i = 1; i < n; i++)
                v[i] = (v[i] + v[i - 1]) & 0xffff;
            s += v[n - 1];
        }
        return s;
    }
}

/*
 * bias.c - planted loops that a sampler weighting accesses by where the
 * timer lands gets wrong (wasp e2e test, silent-store mode; docs/testing.md,
 * "The time-weighting caveat").
 *
 * Each kernel runs over arrays of N longs or doubles, once per round; every
 * round stores the same value again where the comment says "silent" and a
 * new value where it says "changes". A store's next store to the same bytes
 * is by the same instruction one round later, so the analytic program
 * fraction is the share of stored bytes whose store is silent:
 *
 *   two_stores  50%  one silent and one changing store instruction in one
 *                    loop body (the nearest-access sampler read ~91%, and
 *                    0% or 100% under QEMU, where the timer lands only at
 *                    the loop head)
 *   fp_mul      50%  a silent FP store right behind a long-latency multiply
 *                    (it got almost no samples) and a changing one before it
 *   odd_even    50%  one store instruction, silent at odd elements and
 *                    changing at even ones (period-2 timer patterns read
 *                    20-30%)
 *   ratio       75%  three silent store instructions and one changing one
 *                    per iteration (counts 3:1 on different instructions)
 *   scatter     50%  a[perm[i]] = odd i ? 5 : new: the store's index is
 *                    loaded in the same block, so a sample at the block
 *                    start (where QEMU's timer lands) cannot compute its
 *                    address and a code breakpoint must take it
 *   checked     50%  two_stores with a never-taken check between them: a
 *                    sample before the check draws the store after it
 *                    past a branch (a guard must confirm it ran)
 *
 *   wide        67%  a silent 16-byte store and a changing 8-byte one per
 *                    iteration: 50% by accesses, 2/3 by bytes (Eq. 1); a
 *                    debug register watches 8 of the 16 bytes, and the pair
 *                    must count all 16
 *   wide_half   50%  one 16-byte store per iteration, its first 8 bytes
 *                    silent and its last 8 changing: the watched 8 bytes
 *                    must be drawn among the two, not always the first
 *   far         50%  one loop body, two stores: a silent one over a big
 *                    array (its next store one round later, many samples
 *                    away) and a changing one over a small array (its next
 *                    a few hundred iterations later): a watch must survive
 *                    the samples in between to see the first kind's pairs
 *   dense       80%  two loops of the same shape, 24 loads summed in a
 *                    chain, run one after the other: the first stores the
 *                    sum (of zeros) and three more values from it, all
 *                    silent; the second stores one changing value. 4 of 5
 *                    stored bytes are silent, but the loops take about the
 *                    same time, so the samples split about evenly, and a
 *                    sample weighed alike read ~50%: a pair must count its
 *                    region's accesses per instruction
 *   deep        50%  (dead-store mode) a shallow loop stores what a loop
 *                    120 calls down reads (live), and the deep one stores a
 *                    value nothing reads (dead): every trap and sample in
 *                    the deep loop unwinds 120 frames, so sampling periods
 *                    end inside wasp's handler there; delivered as it
 *                    returns, such samples landed in the deep loop, and
 *                    must be dropped
 *   near        50%  one slot stored twice in a row, the same value, each
 *                    iteration: the first store's pair ends at the second
 *                    (silent), the second's at the next iteration's first
 *                    (changes). A sample after both
 *                    that drew the first and armed a watch from the
 *                    registers paired it with the next iteration's store: the
 *                    pair it starts had already ended (Java's allocation
 *                    zeroing, overwritten by the constructor, read live)
 *   targets     50%  a silent store at the top of a loop body, five
 *                    coin-flip branches over a few instructions each, and
 *                    a changing store at the bottom: a sample after a
 *                    branch target must draw the store before it as often
 *                    as one before (a region cut at targets left the first
 *                    store only the samples before the first target: lz4's
 *                    hash-chain loop, docs/accuracy.md)
 *   cond_store  50%  a silent store in an if's arm (the if always holds)
 *                    and a changing store after it: the silent store is
 *                    the last instruction before a branch target, so its
 *                    traps land at the target, where the instruction
 *                    before may not have run (a jump may have come there
 *                    instead); such traps were dropped, and with them
 *                    every pair of a store ending an if's arm (Java's
 *                    allocation zeroing before a slow path's return: 13%
 *                    of a Rhino run's exact bytes, none sampled)
 *   chase       50%  (silent-load mode) two loads per iteration: a pointer
 *                    load into its own base register, `mov (%rdx),%rdx`
 *                    (as list walks and Java's field loads do), of a word
 *                    that never changes, and a load of a word rewritten
 *                    every round: after the first, the registers no longer
 *                    give its address, so its traps were dropped
 *                    (`addr_clobbered`, up to 9% of the silent-load traps of
 *                    the accuracy programs) and its pairs lost
 *   split       50%  (dead-store mode) an 8-byte store, then two 4-byte
 *                    stores over its halves, then an 8-byte load of the
 *                    word: the wide store's bytes are all dead (each half
 *                    killed by one narrow store), the narrow stores' live.
 *                    A trap by the first narrow store ended the wide
 *                    store's watch counting 4 dead and 4 monitored bytes
 *                    (25% here; Java's object zeroing and array copies
 *                    before 4-byte field stores read half as dead as they
 *                    are): the other half must stay watched to its own end
 *   arm         50%  two loops of the same shape, each storing behind an
 *                    if arm that no pass runs: the first's arm is 2
 *                    instructions and its store silent, the second's 40
 *                    and its store changing. A pair counted its region's
 *                    accesses per instruction as if each pass ran the
 *                    region whole: the second store, 7 of 47 instructions
 *                    run per pass, weighed 7/47 of its due (84.1%; each
 *                    pass now also runs a multiply chain, to take the same
 *                    time in both loops on hardware); arms
 *                    must be left out of their regions. And with a fixed
 *                    sampling period the guest's instruction-counting
 *                    clock (-icount: no jitter) aliased with the rounds
 *                    (37.8%)
 *   head        50%  two loops of the same shape, each with an inner loop
 *                    closed out of line (its back edge lies past a far
 *                    `js`, as brotli's inlined 8-byte compare's does): the
 *                    first stores a silent value before the inner loop's
 *                    head, the second a changing value after it. A sample
 *                    before a head ended its region at the next back edge
 *                    it scanned, so the first store's region counted the
 *                    inner loop's instructions too, while samples in the
 *                    inner loop started a region at its head and never
 *                    drew it: the store weighed 4 of its region's 13
 *                    instructions' due; regions must end at every loop
 *                    head, wherever its back edge is
 *
 * Usage: bias KERNEL [SECONDS [ROUNDS]]: rounds until the process has used
 * SECONDS of CPU time (default 2), or ROUNDS of them. CPU time, not a
 * count, so that a run gets the same number of samples on the host and in
 * the QEMU guest, whose speed varies tenfold with the host's load.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 4096

static long ia[N], ib[N], ic[N], id[N], limit[N], loads[N + 24];
static long *far_big, far_n;
static int perm[N];
static double fa[N], fy[N];
static long fb[N];

__attribute__((noinline)) void two_stores(long *a, long *b, long n, long r)
{
    for (long i = 0; i < n; i++) {
        a[i] = 7;      /* PLANT: two-silent */
        b[i] = r + i;  /* PLANT: two-changes */
    }
}

__attribute__((noinline)) void fp_mul(double *a, long *b, const double *y, double k, long n, long r)
{
    for (long i = 0; i < n; i++) {
        b[i] = r ^ i;       /* PLANT: fp-changes */
        a[i] = y[i] * k;    /* PLANT: fp-silent */
    }
}

__attribute__((noinline)) void odd_even(long *a, long n, long r)
{
    for (long i = 0; i < n; i++)
        a[i] = (i & 1) ? 5 : r + i;  /* PLANT: odd-even */
}

__attribute__((noinline)) void ratio(long *a, long *b, long *c, long *d, long n, long r)
{
    for (long i = 0; i < n; i++) {
        a[i] = 1;      /* PLANT: ratio-silent-1 */
        b[i] = 2;      /* PLANT: ratio-silent-2 */
        c[i] = 3;      /* PLANT: ratio-silent-3 */
        d[i] = r + i;  /* PLANT: ratio-changes */
    }
}

__attribute__((noinline)) void scatter(long *a, const int *p, long n, long r)
{
    for (long i = 0; i < n; i++)
        a[p[i]] = (i & 1) ? 5 : r + i;  /* PLANT: scatter */
}

/* The check's cold path: never called (limit[] holds no negative). */
__attribute__((noinline, cold)) void out_of_range(long i)
{
    fprintf(stderr, "bias: limit[%ld] < 0\n", i);
    exit(3);
}

__attribute__((noinline)) void checked(long *a, long *b, const long *lim, long n, long r)
{
    for (long i = 0; i < n; i++) {
        b[i] = r + i;          /* PLANT: checked-changes */
        if (lim[i] < 0)
            out_of_range(i);
        a[i] = 7;              /* PLANT: checked-silent */
    }
}

/* Two longs in one 16-byte store (movups), with no intrinsic to take the line. */
typedef long long2 __attribute__((vector_size(16), aligned(8)));

__attribute__((noinline)) void wide(long *a, long *b, long n, long r)
{
    for (long i = 0; i < n; i += 2) {
        *(long2 *)&a[i] = (long2){ 7, 7 };   /* PLANT: wide-silent */
        b[i / 2] = r + i;                    /* PLANT: wide-changes */
    }
}

__attribute__((noinline)) void wide_half(long *a, long n, long r)
{
    for (long i = 0; i < n; i += 2)
        *(long2 *)&a[i] = (long2){ 7, r + i };   /* PLANT: wide-half */
}

#define FAR_SMALL 256

__attribute__((noinline)) void far(long *big, long *small, long n, long r)
{
    for (long i = 0; i < n; i++) {
        big[i] = 9;                          /* PLANT: far-silent */
        small[i % FAR_SMALL] = r + i;        /* PLANT: far-changes */
    }
}

/* The sum of s[i..i+11]; two of them make one chain of 24 loads, where the
 * two loops below spend most of their time alike, on hardware and under
 * QEMU (whose stores cost more than its arithmetic). */
#define SUM12(s, i) ((s)[i] + (s)[(i) + 1] + (s)[(i) + 2] + (s)[(i) + 3] + (s)[(i) + 4] + (s)[(i) + 5] + \
                     (s)[(i) + 6] + (s)[(i) + 7] + (s)[(i) + 8] + (s)[(i) + 9] + (s)[(i) + 10] + (s)[(i) + 11])

__attribute__((noinline)) void dense(long *a, long *b, long *c, long *d, const long *s, long n)
{
    for (long i = 0; i < n; i++) {
        long x = SUM12(s, i) + SUM12(s, i + 12);   /* s holds zeros */
        a[i] = x; b[i] = x + 1; c[i] = x + 2; d[i] = x + 3;   /* PLANT: dense-silent */
    }
}

__attribute__((noinline)) void sparse(long *a, const long *s, long n, long r)
{
    for (long i = 0; i < n; i++) {
        long t = (i ^ r) * 5;   /* beside the chain: the loop as long as the first */
        t ^= t >> 7;
        a[i] = t + SUM12(s, i) + SUM12(s, i + 12);   /* PLANT: sparse-changes */
    }
}

static volatile int near_stop;   /* never set */

__attribute__((noinline)) void near(volatile long *a, long n, long r)
{
    unsigned long v = (unsigned long)r;
    for (long i = 0; i < n; i++) {
        a[0] = (long)v;   /* PLANT: near-silent */
        a[0] = (long)v;   /* PLANT: near-changes */
        if (near_stop)    /* never: a block starts after the stores, */
            abort();      /* so QEMU's timer lands there too */
        v = (v ^ (v >> 7)) * 0x9E3779B97F4A7C15ul;
        v ^= v >> 11;
    }
}

/* One coin flip of v: an arm of a few instructions the compiler cannot
 * turn into a conditional move (the asm), then a branch target. */
#define FLIP(v, bit, k) \
    do { \
        if ((v) & (1ul << (bit))) { \
            (v) = ((v) ^ ((v) >> (k))) * 3; \
            __asm__ volatile("" : "+r"(v)); \
        } \
    } while (0)

__attribute__((noinline)) void targets(long *a, long *b, long n, long r)
{
    unsigned long v = (unsigned long)r * 0x9E3779B97F4A7C15ul + 1;
    for (long i = 0; i < n; i++) {
        a[i] = 7;   /* PLANT: targets-silent */
        v = v * 6364136223846793005ul + 1442695040888963407ul;
        FLIP(v, 33, 7);
        FLIP(v, 37, 9);
        FLIP(v, 41, 11);
        FLIP(v, 45, 13);
        FLIP(v, 49, 17);
        b[i] = (long)v;   /* PLANT: targets-changes */
    }
}

__attribute__((noinline)) void cond_store(long *a, long *b, const long *lim, long n, long r)
{
    for (long i = 0; i < n; i++) {
        if (lim[i] > 0)   /* always: lim[i] = i + 1 */
            a[i] = 7;     /* PLANT: cond-silent */
        b[i] = r + i;     /* PLANT: cond-changes */
    }
}

static long *chase_self[N];   /* chase_self[i] = &chase_self[i] */

__attribute__((noinline)) void chase_fill(long *b, long n, long r)
{
    for (long i = 0; i < n; i++)
        b[i] = r + i;
}

__attribute__((noinline)) long chase(long **self, const long *b, long n)
{
    long s = 0;
    for (long i = 0; i < n; i++) {
        long *q = (long *)(self + i);
        __asm__("mov (%0), %0" : "+r"(q) : "m"(self[i]));   /* PLANT: chase-silent */
        s += (long)q + b[i];                                 /* PLANT: chase-changes */
    }
    return s;
}

/* deep (dead-store mode): the consumer runs DEEP_FRAMES calls down, so
 * each trap and sample there unwinds a long stack and wasp's handler takes
 * long: periods end inside it. */
#define DEEP_FRAMES 120

__attribute__((noinline)) void deep_produce(long *x, const long *z, long n)
{
    for (long i = 0; i < n; i++)
        x[i] = z[i];   /* PLANT: deep-live */
}

__attribute__((noinline)) long deep_consume(const long *x, long *y, long n)
{
    long s = 0;
    for (long i = 0; i < n; i++) {
        s += x[i];
        y[i] = 5;   /* PLANT: deep-dead */
    }
    return s;
}

__attribute__((noinline)) long deep_descend(int frames, const long *x, long *y, long n)
{
    if (frames == 0)
        return deep_consume(x, y, n);
    return deep_descend(frames - 1, x, y, n) + 1;   /* not a tail call: the frames stay */
}

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* One round of each kernel; main looks the kernel up once, so that no
 * string compare runs between rounds (its loads would join a silent-load
 * kernel's pairs). */
/* arm: two loops of the same shape, each storing behind an if arm that no
 * pass runs (limit[i] = i + 1), laid out inline: the first's arm is 2
 * instructions, the second's 40. Each pass also runs a chain of six
 * dependent multiplies (18 cycles), so that both loops take the same time
 * per pass on hardware too: without it the second, whose branch jumps 166
 * bytes over its arm, took 60% of the time on an AMD EPYC host (perf's
 * task-clock samples), and a sampler that lands by time must then read
 * ~38%, not 50%, whatever it does with arms. */
__attribute__((noinline)) long arm_short(long *a, const long *lim, long n, long r)
{
    long w = r;
    for (long i = 0; i < n; i++) {
        long v = r + i;
        __asm__ volatile(".rept 6\n imul $3, %0, %0\n .endr" : "+r"(w));
        if (__builtin_expect(lim[i] < 0, 1))
            __asm__ volatile("add $1, %0\n imul $3, %0, %0" : "+r"(v));
        a[i] = v - r;   /* PLANT: arm-silent */
    }
    return w;
}

__attribute__((noinline)) long arm_long(long *b, const long *lim, long n, long r)
{
    long w = r;
    for (long i = 0; i < n; i++) {
        long v = r + i;
        __asm__ volatile(".rept 6\n imul $3, %0, %0\n .endr" : "+r"(w));
        if (__builtin_expect(lim[i] < 0, 1))
            __asm__ volatile(".rept 20\n add $1, %0\n imul $3, %0, %0\n .endr" : "+r"(v));
        b[i] = v + r;   /* PLANT: arm-changes */
    }
    return w;
}

/* head: the inner loop's back edge (`jns 1b`) is out of line, past 600
 * bytes of never-run padding, and a never-taken `js` before each head ends
 * QEMU's translation block there, so the timer lands at the head as at a
 * region start. Both bodies run 11 instructions besides the outer loop's:
 * the first stores before the head (its region: the outer loop's code, the
 * store and 3 more), the second after it (the head's region: 9). */
#define HEAD_COLD "jmp 3f\n .fill 600, 1, 0x90\n 2: sub $1, %0\n jns 1b\n 3:\n"

__attribute__((noinline)) void head_before(long *a, long n)
{
    for (long i = 0, t = 0; i < n; i++)
        __asm__ volatile("movq $7, (%1)\n add $1, %0\n test %0, %0\n js 2f\n" /* PLANT: head-silent */
                         "1: test %0, %0\n js 2f\n .rept 6\n add $1, %0\n .endr\n" HEAD_COLD
                         : "+r"(t) : "r"(a + i) : "memory", "cc");
}

__attribute__((noinline)) void head_after(long *b, long n, long r)
{
    for (long i = 0, t = 0; i < n; i++)
        __asm__ volatile("add $1, %0\n add $1, %0\n test %0, %0\n js 2f\n" /* PLANT: head-changes */
                         "1: test %0, %0\n js 2f\n mov %2, (%1)\n .rept 5\n add $1, %0\n .endr\n" HEAD_COLD
                         : "+r"(t) : "r"(b + i), "r"(r + i) : "memory", "cc");
}

/* split (dead-store mode): one word stored whole, then as two halves, then
 * loaded whole. volatile keeps the compiler from merging or dropping any of
 * the four accesses. */
static union split_word {
    long whole;
    int half[2];
} split_words[N];

__attribute__((noinline)) long split(volatile union split_word *w, long n, long r)
{
    long s = 0;
    for (long i = 0; i < n; i++) {
        w[i].whole = r + i;          /* PLANT: split-dead */
        w[i].half[0] = (int)i;       /* PLANT: split-lo */
        w[i].half[1] = (int)r;       /* PLANT: split-hi */
        s += w[i].whole;
    }
    return s;
}

static long total;   /* what the kernels return, printed so nothing is optimized away */

static void round_two_stores(long r) { two_stores(ia, ib, N, r); }
static void round_fp_mul(long r) { fp_mul(fa, ib, fy, 1.0000001, N, r); }
static void round_odd_even(long r) { odd_even(ia, N, r); }
static void round_ratio(long r) { ratio(ia, ib, ic, id, N, r); }
static void round_scatter(long r) { scatter(ia, perm, N, r); }
static void round_checked(long r) { checked(ia, ib, limit, N, r); }
static void round_wide(long r) { wide(ia, ib, N, r); }
static void round_wide_half(long r) { wide_half(ia, N, r); }
static void round_far(long r) { far(far_big, ib, far_n, r); }
static void round_near(long r) { near(ia, N, r); }
static void round_targets(long r) { targets(ia, ib, N, r); }
static void round_cond_store(long r) { cond_store(ia, ib, limit, N, r); }

static void round_deep(long r)
{
    (void)r;
    deep_produce(ia, limit, N);   /* as long a loop as deep_consume's */
    total += deep_descend(DEEP_FRAMES, ia, ib, N);
}

static void round_chase(long r)
{
    chase_fill(ib, N, r);
    total += chase(chase_self, ib, N);
}

static void round_split(long r) { total += split(split_words, N, r); }

static void round_arm(long r)
{
    total += arm_short(ia, limit, N, r);
    total += arm_long(ib, limit, N, r);
}

static void round_head(long r)
{
    head_before(ia, N);
    head_after(ib, N, r);
}

static void round_dense(long r)
{
    dense(ia, ib, ic, id, loads, N);
    sparse(fb, loads, N, r);
}

static const struct {
    const char *name;
    void (*round)(long r);
} kernels[] = {
    { "two_stores", round_two_stores }, { "fp_mul", round_fp_mul }, { "odd_even", round_odd_even },
    { "ratio", round_ratio }, { "scatter", round_scatter }, { "checked", round_checked },
    { "wide", round_wide }, { "wide_half", round_wide_half }, { "far", round_far },
    { "dense", round_dense }, { "near", round_near }, { "deep", round_deep },
    { "targets", round_targets }, { "cond_store", round_cond_store }, { "chase", round_chase },
    { "split", round_split }, { "arm", round_arm },
    { "head", round_head },
};

int main(int argc, char **argv)
{
    const char *kernel = argc > 1 ? argv[1] : "";
    double seconds = argc > 2 ? atof(argv[2]) : 2.0;
    long rounds = argc > 3 ? atol(argv[3]) : -1;
    far_n = getenv("BIAS_FAR_N") ? atol(getenv("BIAS_FAR_N")) : 1L << 22;
    if (!(far_big = calloc((size_t)far_n, sizeof(long))))
        return 2;
    for (long i = 0; i < N; i++) {
        fy[i] = 1.0 + (double)i / N;
        perm[i] = (int)((i * 1031) % N);   /* 1031 is odd: a permutation */
        limit[i] = i + 1;
        chase_self[i] = (long *)&chase_self[i];
    }
    void (*round)(long r) = NULL;
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
        if (!strcmp(kernel, kernels[i].name))
            round = kernels[i].round;
    if (!round) {
        fprintf(stderr, "usage: bias ");
        for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
            fprintf(stderr, "%s%s", i ? "|" : "", kernels[i].name);
        fprintf(stderr, " [SECONDS [ROUNDS]]\n");
        return 2;
    }
    for (long r = 1; rounds < 0 || r <= rounds; r++) {
        if ((r & 63) == 0 && cpu_seconds() >= seconds)
            break;
        round(r);
    }
    printf("%ld %ld %g %ld\n", ia[N - 1], ib[N - 1] + ic[1] + id[1] + fb[1], fa[N - 1], total);
    return 0;
}

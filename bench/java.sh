#!/usr/bin/env bash
# bench/java.sh - what wasp costs a Java program (JVM front end, issue 5).
#
# Compiles the workloads in bench/java/*.java (javac --release 17) into
# build/bench/java/, then runs each workload, round after round, in these
# configurations (order rotated per round so baseline and profiled runs
# interleave):
#   base      the same JVM and command, no agent
#   <T>       `wasp run [--mode M] [--interval T] -o DIR -- java ...`, exactly
#             what a user types; "default" passes no --interval, so the
#             agent's own default applies (read from src/engine/options.h for
#             the label, and checked against the interval in the profile)
# Each run is timed by /usr/bin/time -f '%e %U %S %M' (wall, user, sys, peak
# RSS of the JVM: wasp run waits for it, so the JVM's rusage reaches time).
# The system's other CPU load during the run (/proc/stat busy time minus the
# run's own CPU time) and steal are recorded; a run disturbed by more than a
# quarter core of other load is measured again (BENCH_RETRIES times).
#
# Workloads:
#   collections  bench/java/Collections.java: HashMap/ArrayList churn (allocation-heavy, GC)
#   numeric      bench/java/Numeric.java: Jacobi stencil, matmul, prefix sums on arrays
#   rhino        Debian's Rhino JavaScript engine running bench/real/workload.js
#                (skipped with a note when /usr/share/java/js.jar is missing: apt-get install rhino)
# collections and rhino allocate a lot and run with a fixed heap (-Xms = -Xmx):
# with G1's default ergonomics their young generation, and so their peak RSS,
# varies run to run by a factor of two (480-1120 MB for rhino, in both
# configurations), which would drown the agent's own memory in noise.
#
# Environment:
#   BENCH_RUNS=5                            rounds (medians are taken over them)
#   BENCH_WORKLOADS="collections numeric rhino"
#   BENCH_INTERVALS="default"               any wasp durations, e.g. "default 1ms 20ms"
#   BENCH_MODE=                             wasp mode (empty: the agent's default)
#   BENCH_RETRIES=2                         re-runs of a measurement disturbed by other load
#   JAVA=/usr/lib/jvm/java-17-openjdk-amd64/bin/java
#   WASP=build/bin/wasp                     (its libwasp.so is copied aside first)
# Raw data: build/bench/java-results.tsv (one line per run); the table goes to stdout.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source bench/rounds.sh

runs=${BENCH_RUNS:-5}
workloads=${BENCH_WORKLOADS:-collections numeric rhino}
intervals=${BENCH_INTERVALS:-default}
mode=${BENCH_MODE:-}
retries=${BENCH_RETRIES:-2}
java=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
wasp_bin=${WASP:-build/bin/wasp}
out=build/bench
jout=$out/java

die() { echo "bench: $*" >&2; exit 1; }

[[ $runs =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive integer, not '$runs'"
[[ -x $java ]] || die "no JVM at $java — set JAVA=/path/to/bin/java"
javac=$(dirname "$java")/javac
[[ -x $javac ]] || die "no javac beside $java (a JDK, not a JRE, is needed)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing — apt-get install time"
[[ -x $wasp_bin && -f $(dirname "$wasp_bin")/../lib/libwasp.so ]] || die "no $wasp_bin — run make first"
command -v python3 >/dev/null || die "python3 is needed for the analysis"

default_ns=$(bench_default_ns)

# --- build -------------------------------------------------------------------
mkdir -p "$jout/classes" "$jout/bin/bin" "$jout/bin/lib"
"$javac" --release 17 -d "$jout/classes" bench/java/*.java
# A private copy of wasp and its library, so a rebuild during the benchmark
# cannot mix two versions (wasp finds the library at ../lib/ beside itself).
cp "$wasp_bin" "$jout/bin/bin/wasp"
cp "$(dirname "$wasp_bin")/../lib/libwasp.so" "$jout/bin/lib/libwasp.so"
wasp=$root/$jout/bin/bin/wasp

workload_cmd() {  # name -> the java command line, one word per line
    case $1 in
        collections) printf "%s\n" "$java" -Xms1g -Xmx1g -cp "$jout/classes" Collections ;;
        numeric) printf '%s\n' "$java" -cp "$jout/classes" Numeric ;;
        rhino) printf '%s\n' "$java" -Xms512m -Xmx512m -cp /usr/share/java/js.jar \
                   org.mozilla.javascript.tools.shell.Main bench/real/workload.js 14 ;;
        *) die "unknown workload $1 (collections numeric rhino)" ;;
    esac
}

active=()
for w in $workloads; do
    if [[ $w == rhino && ! -f /usr/share/java/js.jar ]]; then
        echo "bench: skipping rhino: /usr/share/java/js.jar missing (apt-get install rhino)" >&2
        continue
    fi
    workload_cmd "$w" >/dev/null
    active+=("$w")
done
((${#active[@]})) || die "no workload to run"

# --- measure -----------------------------------------------------------------
results=$out/java-results.tsv
rundir=$jout/runs
rm -rf "$rundir"
mkdir -p "$rundir"
printf 'workload\tconfig\tround\tinterval_ns\twall\tuser\tsys\trss_kb\tother\tsteal\tsamples\tarmed\ttraps\tsample_ns\ttrap_ns\tprofiles\tprofile_interval\n' >"$results"

configs=(base)
for iv in $intervals; do configs+=("$iv"); done

interval_ns() {  # label -> ns
    case $1 in
        default) echo "$default_ns" ;;
        *) python3 -c 'import re,sys
m = re.fullmatch(r"([0-9.]+)(ns|us|ms|s|)", sys.argv[1])
if not m: sys.exit("bench: bad interval " + sys.argv[1])
print(int(float(m.group(1)) * {"ns": 1, "": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[m.group(2)]))' "$1" ;;
    esac
}

cpu_jiffies() {  # "busy steal" over all CPUs, in clock ticks
    awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $9 }' /proc/stat
}

# One measurement: prints the TSV line's measured fields.
measure_once() {  # workload config round
    local w=$1 cfg=$2 r=$3 dir=$rundir/$1-$2-$3 tfile=$rundir/$1-$2-$3.time
    local -a cmd pre=()
    mapfile -t cmd < <(workload_cmd "$w")
    rm -rf "$dir"
    if [[ $cfg != base ]]; then
        pre=("$wasp" run -o "$dir")
        [[ -n $mode ]] && pre+=(--mode "$mode")
        # The cost of that interval, not of the budget (bench/budget.sh measures that).
        [[ $cfg != default ]] && pre+=(--interval "$cfg" --budget off)
        pre+=(--)
    fi
    local b0 s0 b1 s1
    read -r b0 s0 < <(cpu_jiffies)
    /usr/bin/time -o "$tfile" -f '%e %U %S %M' "${pre[@]}" "${cmd[@]}" >"$rundir/$1-$2-$3.out" 2>&1 ||
        die "$w ($cfg) failed: see $rundir/$1-$2-$3.out"
    read -r b1 s1 < <(cpu_jiffies)
    local wall user sys rss
    read -r wall user sys rss < <(tail -n 1 "$tfile")
    local hz
    hz=$(getconf CLK_TCK)
    local other steal
    other=$(awk -v b="$((b1 - b0))" -v hz="$hz" -v u="$user" -v s="$sys" \
                'BEGIN { o = b / hz - u - s; printf "%.2f", o < 0 ? 0 : o }')
    steal=$(awk -v s="$((s1 - s0))" -v hz="$hz" 'BEGIN { printf "%.2f", s / hz }')
    local stats="0 0 0 0 0 0" piv=-
    if [[ $cfg != base ]]; then
        compgen -G "$dir/*/*.wasp" >/dev/null || die "$w ($cfg): no profile in $dir"
        stats=$(awk -F'\t' 'FNR == 1 { n++ } $1 == "stat" { s[$2] += $3 } $1 == "interval" { iv = $2 }
            END { printf "%d %d %d %d %d %d %s", s["samples"], s["armed"], s["traps"], s["sample_ns"], s["trap_ns"], n, iv }' \
            "$dir"/*/*.wasp)
        piv=${stats##* }
        stats=${stats% *}
    fi
    echo "$wall $user $sys $rss $other $steal $stats $piv"
}

declare -A config_ns=([base]=0)
for iv in $intervals; do config_ns[$iv]=$(interval_ns "$iv"); done

echo "wasp Java benchmark: $runs round(s) of {${configs[*]}} x {${active[*]}};" \
     "$("$java" -version 2>&1 | head -n 1); default interval $((default_ns / 1000)) us" >&2
bench_rounds "${active[@]}"

# --- analyse -----------------------------------------------------------------
python3 - "$results" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
med = statistics.median
def f(r, k): return float(r[k])
order = []
for r in rows:
    key = (r["workload"], r["config"])
    if key not in order: order.append(key)
print("%-12s %-8s %7s %7s %8s %8s %8s %8s %7s %7s %9s %9s %6s" % (
    "workload", "config", "wall_s", "cpu_s", "wall_x", "cpu_x", "rss_MB", "rss_x",
    "smp/s", "trap/s", "us/event", "other_s", "runs"))
for (w, c) in order:
    mine = [r for r in rows if r["workload"] == w and r["config"] == c]
    base = [r for r in rows if r["workload"] == w and r["config"] == "base"]
    wall = med([f(r, "wall") for r in mine]); cpu = med([f(r, "user") + f(r, "sys") for r in mine])
    rss = med([f(r, "rss_kb") for r in mine]) / 1024
    bwall = med([f(r, "wall") for r in base]); bcpu = med([f(r, "user") + f(r, "sys") for r in base])
    brss = med([f(r, "rss_kb") for r in base]) / 1024
    other = med([f(r, "other") + f(r, "steal") for r in mine])
    if c == "base":
        print("%-12s %-8s %7.2f %7.2f %8s %8s %8.1f %8s %7s %7s %9s %9.2f %6d" % (
            w, c, wall, cpu, "-", "-", rss, "-", "-", "-", "-", other, len(mine)))
        continue
    sps = med([f(r, "samples") / f(r, "wall") for r in mine])
    tps = med([f(r, "traps") / f(r, "wall") for r in mine])
    ev = sum(f(r, "samples") + f(r, "traps") for r in mine)
    ns = sum(f(r, "sample_ns") + f(r, "trap_ns") for r in mine)
    print("%-12s %-8s %7.2f %7.2f %+7.1f%% %+7.1f%% %8.1f %+7.1f%% %7.1f %7.1f %9.1f %9.2f %6d" % (
        w, c, wall, cpu, 100 * (wall / bwall - 1), 100 * (cpu / bcpu - 1), rss,
        100 * (rss / brss - 1), sps, tps, ns / ev / 1000 if ev else 0, other, len(mine)))
print("medians over rounds; wall_x/cpu_x/rss_x: change against base; smp/s, trap/s: samples and"
      "\ntraps per wall second; us/event: (sample_ns+trap_ns)/(samples+traps) over all profiles;"
      "\nother_s: CPU seconds other processes used during the run (plus steal).")
EOF

#!/usr/bin/env bash
# bench/exact.sh - what the exact mode (`wasp run --exact`) costs: slowdown
# and peak memory against the same program run unprofiled, on the native
# workloads of bench/workloads/, for each mode. Prints a markdown table
# (docs/benchmarks.md keeps the last one) and writes the raw figures to
# build/bench/exact-results.tsv.
#
# Slowdown is CPU time (user + sys of the whole process tree: the program,
# or Valgrind running it, and wasp converting its raw file) over the
# unprofiled run's, so that other load on a shared machine does not count;
# wall time is printed too. Memory is peak RSS over the unprofiled run's.
# The workloads run with smaller arguments than bench/native.sh uses (~1/20
# of the work), since the exact mode is 10-60x slower. jnumeric and
# jcollections are bench/java's Numeric and Collections (JDK 17 by default)
# with ~1/100 of bench/java.sh's work; a JVM's start-up (about 0.2 s alone,
# 5-7 s of CPU under the exact mode) is part of their figures.
#
# Environment:
#   BENCH_RUNS=1                       rounds (medians are taken over them)
#   BENCH_WORKLOADS="stream hash fp mt jnumeric jcollections"
#   JAVA=/usr/lib/jvm/java-17-openjdk-amd64/bin/java
#   BENCH_MODES="dead-store silent-store silent-load"
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
runs=${BENCH_RUNS:-1}
workloads=${BENCH_WORKLOADS:-stream hash fp mt jnumeric jcollections}
java=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
modes=${BENCH_MODES:-dead-store silent-store silent-load}
wasp=$root/build/bin/wasp
die() { echo "bench: $*" >&2; exit 1; }
[[ -x $wasp && -f build/lib/valgrind/wasp-amd64-linux ]] || die "run make first"
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive integer, not '$runs'"

declare -A args=([stream]=5 [hash]=1 [fp]=250 [mt]=10 [jnumeric]=200 [jcollections]=2)

mkdir -p build/bench
work=$(mktemp -d "$root/build/bench/exact.XXXXXX")
trap 'rm -rf "$work"' EXIT
# cmd WORKLOAD: the workload's command line, one word per line.
cmd() {
    case $1 in
        jnumeric) printf '%s\n' "$java" -cp "$work/classes" Numeric "${args[$1]}" ;;
        jcollections) printf '%s\n' "$java" -Xms256m -Xmx256m -cp "$work/classes" Collections "${args[$1]}" ;;
        *) printf '%s\n' "$work/$1" "${args[$1]}" ;;
    esac
}
for w in $workloads; do
    [[ -n ${args[$w]:-} ]] || die "no arguments known for workload $w"
    if [[ $w == j* ]]; then
        [[ -d $work/classes ]] || "$(dirname "$java")/javac" --release 17 -d "$work/classes" bench/java/*.java ||
            die "javac failed"
    else
        gcc -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -o "$work/$w" "bench/workloads/$w.c" -lm -lpthread
    fi
done
gcc -std=c11 -O2 -Wall -Wextra -Werror -o "$work/measure" bench/measure.c

results=build/bench/exact-results.tsv
printf 'workload\tmode\tround\tconfig\twall\tuser\tsys\trss_kb\n' >"$results"
# run WORKLOAD MODE ROUND CONFIG CMD...: one measured run, appended to the results.
run() {
    local w=$1 m=$2 r=$3 cfg=$4 line
    shift 4
    line=$("$work/measure" -- "$@" 2>>"$work/stderr.log") || die "$cfg run of $w failed: $(tail -n 3 "$work/stderr.log")"
    read -r _ wall user sys rss status _ <<<"$line"
    [[ $status == 0 ]] || die "$cfg run of $w exited $status: $(tail -n 3 "$work/stderr.log")"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$w" "$m" "$r" "$cfg" "$wall" "$user" "$sys" "$rss" >>"$results"
}

for ((r = 1; r <= runs; r++)); do
    for w in $workloads; do
        for m in $modes; do
            mapfile -t c < <(cmd "$w")
            run "$w" "$m" "$r" base nice "${c[@]}"
            rm -rf "$work/prof"
            run "$w" "$m" "$r" exact nice "$wasp" run --exact --mode "$m" -o "$work/prof" -- "${c[@]}"
        done
    done
done

python3 - "$results" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
med = lambda xs: statistics.median(xs)
cells = {}
for r in rows:
    cells.setdefault((r["workload"], r["mode"]), {}).setdefault(r["config"], []).append(r)
print("| workload | mode | CPU base s | CPU exact s | slowdown (CPU) | slowdown (wall) | RSS base MiB | RSS exact MiB | memory |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
slow, mem, jslow, jmem = [], [], [], []
for (w, m), c in cells.items():
    cpu = {k: med([float(x["user"]) + float(x["sys"]) for x in v]) for k, v in c.items()}
    wall = {k: med([float(x["wall"]) for x in v]) for k, v in c.items()}
    rss = {k: med([float(x["rss_kb"]) for x in v]) for k, v in c.items()}
    s, ws, mm = cpu["exact"] / cpu["base"], wall["exact"] / wall["base"], rss["exact"] / rss["base"]
    # The budget (issue 12) is over the native workloads; the JVM's are reported apart.
    (jslow if w.startswith("j") else slow).append(s)
    (jmem if w.startswith("j") else mem).append(mm)
    print("| %s | %s | %.2f | %.2f | %.1fx | %.1fx | %.0f | %.0f | %.2fx |" %
          (w, m, cpu["base"], cpu["exact"], s, ws, rss["base"] / 1024, rss["exact"] / 1024, mm))
print()
if slow:
    print("native: median slowdown %.1fx (budget 60x), median memory %.2fx (budget 4x), over %d cells" %
          (med(slow), med(mem), len(slow)))
if jslow:
    print("Java: median slowdown %.1fx, median memory %.2fx, over %d cells" % (med(jslow), med(jmem), len(jslow)))
PY

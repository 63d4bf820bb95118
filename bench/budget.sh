#!/usr/bin/env bash
# bench/budget.sh - does the overhead budget hold? (`--budget`, src/engine/budget.h)
#
# Runs a store-dense native workload (bench/workloads/stream.c) and a Java
# one (bench/java/Numeric.java, JIT-compiled array loops), round after round,
# in three configurations (order rotated per round):
#   base     unprofiled
#   budget   profiled at BENCH_INTERVAL with budget=BENCH_BUDGET
#   off      profiled at BENCH_INTERVAL with budget=off (what the budget saves)
# and prints, per workload and configuration, the median CPU time (user +
# sys of the whole process: the host is shared, so wall time mostly
# measures the neighbours), the measured slowdown against the median base
# run and (paired) the median of each round's slowdown against that round's
# base run, the host's noise (half the interquartile range of the base runs,
# relative to their median), and wasp's own estimate of the slowdown from
# its profiles' budget accounts (sum of budget.wasp_ns over the process's
# threads, against its CPU time without them).
#
# The library is loaded as `wasp run` loads it (LD_PRELOAD, -agentpath for
# Java), with the signal cost `wasp run` would measure (taken once, from a
# profile of /bin/true), so the CLI's own start-up is not counted.
#
# Environment:
#   BENCH_RUNS=7              rounds (medians over them)
#   BENCH_BUDGET=1%           the budget under test
#   BENCH_INTERVAL=1ms        requested interval: without a budget wasp would
#                             take well over 1% here
#   BENCH_STREAM_PASSES=150   native workload size (~2.7 s of CPU)
#   BENCH_JAVA_ITERS=4000     Java workload size (~3 s of CPU)
#   BENCH_WORKLOADS="stream java"
#   JAVA=/usr/lib/jvm/java-17-openjdk-amd64/bin/java
# Raw data: build/bench/budget-results.tsv (one line per run).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

runs=${BENCH_RUNS:-7}
budget=${BENCH_BUDGET:-1%}
interval=${BENCH_INTERVAL:-1ms}
passes=${BENCH_STREAM_PASSES:-150}
iters=${BENCH_JAVA_ITERS:-4000}
workloads=${BENCH_WORKLOADS:-stream java}
java=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
cc=${CC:-gcc}
out=build/bench

die() { echo "bench: $*" >&2; exit 1; }

[[ -f build/lib/libwasp.so && -x build/bin/wasp ]] || die "run make first"
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive integer, not '$runs'"
[[ -x $java ]] || die "no JVM at $java — set JAVA=/path/to/bin/java"
command -v python3 >/dev/null || die "python3 is needed for the summary"

mkdir -p "$out"
work=$(mktemp -d "$root/$out/budget.XXXXXX")
trap 'rm -rf "$work"' EXIT
bin=$work/bin
mkdir -p "$bin" "$work/classes"
"$cc" -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -o "$bin/stream" bench/workloads/stream.c -lm
"$cc" -std=c11 -O2 -Wall -Wextra -Werror -o "$bin/measure" bench/measure.c
"$(dirname "$java")/javac" --release 17 -d "$work/classes" bench/java/Numeric.java
cp build/lib/libwasp.so "$bin/libwasp.so"   # a rebuild meanwhile cannot mix two libraries
lib=$bin/libwasp.so

# The per-signal cost wasp run measures (signal_cost.c), as its profile records it.
build/bin/wasp run --no-watch-check -o "$work/probe" -- /bin/true 2>/dev/null
cost=$(awk -F'\t' '$1 == "stat" && $2 == "budget.signal_cost_ns" { print $3; exit }' "$work"/probe/*/*.wasp)
[[ -n $cost ]] || die "no signal cost in the probe's profile"

results=$work/results.tsv
printf 'workload\tconfig\tround\twall\tcpu\tcpu_ns\twasp_ns\n' >"$results"

# One run: prints "wall cpu budget.cpu_ns budget.wasp_ns" (sums over threads).
measure_once() {  # workload config round
    local w=$1 cfg=$2 dir=$work/runs/$1-$2-$3 opts env=() cmd=()
    opts="dir=$dir,interval=$interval,sampler=software,watch-check=off,signal-cost=${cost}ns"
    case $cfg in
        budget) opts+=",budget=$budget" ;;
        off) opts+=",budget=off" ;;
    esac
    case $w in
        stream)
            cmd=("$bin/stream" "$passes")
            [[ $cfg == base ]] || env=(-e "LD_PRELOAD=$lib" -e "WASP_OPTIONS=$opts") ;;
        java)
            cmd=("$java" -Xms256m -Xmx256m)
            [[ $cfg == base ]] || cmd+=("-agentpath:$lib=$opts")
            cmd+=(-cp "$work/classes" Numeric "$iters") ;;
    esac
    local line pid wall user sys rss status rest
    line=$("$bin/measure" "${env[@]}" -- "${cmd[@]}" 2>>"$work/stderr.log")
    read -r pid wall user sys rss status rest <<<"$line"
    [[ $status == 0 ]] || die "$w ($cfg) exited with status $status: $(tail -3 "$work/stderr.log")"
    local acc="0 0"
    if [[ $cfg != base ]]; then
        compgen -G "$dir/*/*.wasp" >/dev/null || die "$w ($cfg): no profile in $dir"
        acc=$(awk -F'\t' '$1 == "stat" { s[$2] += $3 } END { printf "%d %d", s["budget.cpu_ns"], s["budget.wasp_ns"] }' \
              "$dir"/*/*.wasp)
    fi
    rm -rf "$dir"
    echo "$wall $(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.3f", u + s }') $acc"
}

configs=(base budget off)
echo "wasp budget benchmark: $runs round(s) of {${configs[*]}} x {$workloads};" \
     "budget $budget, interval $interval, signal cost $((cost / 1000)) us" >&2
start=$SECONDS
for ((r = 1; r <= runs; r++)); do
    for w in $workloads; do
        for ((k = 0; k < 3; k++)); do
            cfg=${configs[$(((k + r) % 3))]}
            printf '%s\t%s\t%d\t%s\n' "$w" "$cfg" "$r" "$(measure_once "$w" "$cfg" "$r" | tr ' ' '\t')" >>"$results"
        done
    done
    echo "  round $r/$runs done ($((SECONDS - start)) s)" >&2
done
cp "$results" "$out/budget-results.tsv"

python3 - "$results" "$budget" "$interval" $workloads <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter='\t'))
budget, interval = sys.argv[2], sys.argv[3]
def q(xs, p):
    xs = sorted(xs); k = (len(xs) - 1) * p; f = int(k)
    return xs[f] + (xs[min(f + 1, len(xs) - 1)] - xs[f]) * (k - f)
print("| workload | config | runs | CPU s (median) | slowdown (medians) | slowdown (paired) | host noise | wasp's estimate | measured / estimate |")
print("|---|---|---|---|---|---|---|---|---|")
for w in sys.argv[4:]:
    base = [float(r["cpu"]) for r in rows if r["workload"] == w and r["config"] == "base"]
    base_of = {r["round"]: float(r["cpu"]) for r in rows if r["workload"] == w and r["config"] == "base"}
    bm = statistics.median(base)
    noise = (q(base, 0.75) - q(base, 0.25)) / 2 / bm
    print(f"| {w} | base | {len(base)} | {bm:.3f} | | | ±{100 * noise:.2f}% | | |")
    for cfg in ("budget", "off"):
        rs = [r for r in rows if r["workload"] == w and r["config"] == cfg]
        cpu = statistics.median(float(r["cpu"]) for r in rs)
        slow = cpu / bm - 1
        # Against the base run of the same round: slow drifts of the host cancel.
        paired = statistics.median(float(r["cpu"]) / base_of[r["round"]] - 1 for r in rs)
        # wasp's own account, as a slowdown of the whole process: its time
        # against the process's CPU time without it.
        est = statistics.median(int(r["wasp_ns"]) / 1e9 / (float(r["cpu"]) - int(r["wasp_ns"]) / 1e9) for r in rs)
        label = f"budget={budget}" if cfg == "budget" else "budget=off"
        ratio = f"{paired / est:.2f}" if est > 0 else "-"
        print(f"| {w} | {label}, interval={interval} | {len(rs)} | {cpu:.3f} | {100 * slow:+.2f}% | "
              f"{100 * paired:+.2f}% | | {100 * est:.2f}% | {ratio} |")
EOF

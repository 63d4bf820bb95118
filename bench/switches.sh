#!/usr/bin/env bash
# bench/switches.sh - what wasp adds to a program's context switches, and
# whether its report says so.
#
# Runs tests/e2e/handoff.c (two threads passing a byte through pipes) and
# bench/java/Handoff.java (two threads exchanging through SynchronousQueues)
# unprofiled and under `wasp run` (2% budget) at each interval of
# BENCH_INTERVALS (INTERVAL or INTERVAL:SAMPLER; auto's sampler at 10 ms
# is the CPU-time timer, below it the task clock), BENCH_RUNS rounds
# each, and prints per workload and
# interval the median wall time of the handoffs, the time wasp added per
# context switch (the added time over the switches the report counted),
# and what the report charged per switch and estimated in all.
#
# Environment:
#   BENCH_RUNS=5               rounds (medians over them)
#   BENCH_ROUNDS=50000         handoffs per run
#   BENCH_INTERVALS="10ms 10ms:software 1ms"
#   BENCH_CPUS=0              taskset's CPU list for every run; "" leaves the
#                              threads free (then a run takes 0.35 s or 2 s as
#                              the scheduler puts both threads on one CPU or not)
#   JAVA=/usr/lib/jvm/java-17-openjdk-amd64/bin/java
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=bench/lib.sh
. bench/lib.sh
runs=${BENCH_RUNS:-5}
n=${BENCH_ROUNDS:-50000}
intervals=${BENCH_INTERVALS:-10ms 10ms:software 1ms}
java=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
pin=()
[ -n "${BENCH_CPUS-0}" ] && pin=(taskset -c "${BENCH_CPUS-0}")
out=build/bench/switches
wasp=build/bin/wasp

make -s all >/dev/null
mkdir -p "$out/classes"
cc -O2 -g -o "$out/handoff" tests/e2e/handoff.c -lpthread
"${java%/java}/javac" -d "$out/classes" bench/java/Handoff.java

run_native() {   # [WASP-COMMAND...]: the handoffs' wall time in ms, as the program says
    "${pin[@]}" "$@" "$out/handoff" "$n" 2>/dev/null | sed -n 's/^handoff [0-9]* //p'
}

run_java() {     # [WASP-COMMAND...]: the handoffs' wall time in ms, as the program says
    "${pin[@]}" "$@" "$java" -cp "$out/classes" Handoff "$n" 2>/dev/null | sed -n 's/^ms //p'
}

report() {       # DIR: "switches switch_ns overhead_all sampler" of its report
    "$wasp" report "$1" --format json 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)
b = r["budget"]
print(b["switches"], b["switch_ns"], b["overhead_all"], r["sampler"])'
}

for kind in native java; do
    : >"$out/$kind.base"
    for _ in $(seq "$runs"); do "run_$kind" >>"$out/$kind.base"; done
    base=$(median <"$out/$kind.base")
    for config in $intervals; do
        interval=${config%%:*}
        sampler=auto
        [ "$config" != "$interval" ] && sampler=${config#*:}
        : >"$out/$kind.$config"
        for _ in $(seq "$runs"); do
            rm -rf "$out/$kind.run"
            "run_$kind" "$wasp" run --interval "$interval" --sampler "$sampler" -o "$out/$kind.run" -- \
                >>"$out/$kind.$config"
        done
        with=$(median <"$out/$kind.$config")
        read -r switches charged overhead used <<<"$(report "$out/$kind.run")"
        awk -v k="$kind" -v i="$interval $used" -v n="$n" -v b="$base" -v w="$with" -v s="$switches" \
            -v c="$charged" -v o="$overhead" 'BEGIN {
            printf "%-6s %s, %d handoffs: unprofiled %.0f ms, under wasp %.0f ms (+%.0f%%): +%.2f us a switch (median of runs)\n",
                k, i, n, b, w, (w - b) * 100 / b, (w - b) * 1000 / s
            printf "       wasp says (last run): %d switches charged %.1f ms (%.2f us each); est. overhead %.1f%% of CPU time\n",
                s, c / 1e6, c / 1e3 / s, o * 100 }'
    done
done

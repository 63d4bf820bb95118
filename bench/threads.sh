#!/usr/bin/env bash
# bench/threads.sh - what wasp costs a program that starts a thread per task.
#
# Runs tests/e2e/thread_churn.c (native: pthread_create + join, N times)
# and bench/java/Churn.java (Thread.start + join, N times) unprofiled and
# under `wasp run` (defaults: 10 ms interval, 2% budget), BENCH_RUNS rounds
# each, and prints per workload the median wall time of the N threads, the
# time wasp added per thread, and what wasp's report says it spent in the
# threads' starts and ends (`thread costs`) and how many profile files the
# run left.
#
# Environment:
#   BENCH_RUNS=5          rounds (medians over them)
#   BENCH_THREADS=5000    threads per run
#   JAVA=/usr/lib/jvm/java-17-openjdk-amd64/bin/java
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=bench/lib.sh
. bench/lib.sh
runs=${BENCH_RUNS:-5}
n=${BENCH_THREADS:-5000}
java=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
out=build/bench/threads
wasp=build/bin/wasp

make -s all >/dev/null
mkdir -p "$out/classes"
cc -O2 -g -o "$out/thread_churn" tests/e2e/thread_churn.c -lpthread
"${java%/java}/javac" -d "$out/classes" bench/java/Churn.java

run_native() {   # [WASP-COMMAND...]: the N threads' wall time in ms, as the program says
    "$@" "$out/thread_churn" "$n" 2>/dev/null | sed -n 's/^churned [0-9]* [0-9]* //p'
}

run_java() {     # [WASP-COMMAND...]: the N threads' wall time in ms, as the program says
    "$@" "$java" -cp "$out/classes" Churn "$n" 2>/dev/null | sed -n 's/^ms //p'
}

for kind in native java; do
    : >"$out/$kind.base"
    : >"$out/$kind.wasp"
    for _ in $(seq "$runs"); do
        "run_$kind" >>"$out/$kind.base"
        rm -rf "$out/$kind.run"
        "run_$kind" "$wasp" run -o "$out/$kind.run" -- >>"$out/$kind.wasp" 2>/dev/null
    done
    base=$(median <"$out/$kind.base")
    with=$(median <"$out/$kind.wasp")
    costs=$("$wasp" report "$out/$kind.run" 2>/dev/null | sed -n 's/^  thread costs: *//p' | sed 's/,$//')
    files=$(find "$out/$kind.run" -name '*.wasp' | wc -l)
    awk -v k="$kind" -v n="$n" -v b="$base" -v w="$with" -v c="$costs" -v f="$files" 'BEGIN {
        printf "%-7s %d threads: unprofiled %d ms, under wasp %d ms: +%.1f us a thread (median of runs)\n", k, n, b, w, (w - b) * 1000 / n
        printf "        wasp says (last run): %s; %d profile files\n", c, f }'
done

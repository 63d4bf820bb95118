#!/usr/bin/env bash
# bench/attach.sh - how long `wasp attach` takes (issue 13, item 1).
#
# For each JDK, starts tests/e2e/java/AttachTarget.java (two busy workers,
# started without wasp) and runs BENCH_RUNS rounds of
#   wasp attach PID --duration 2s        the latency to "attached" (wasp's own
#                                        figure: load command sent to agent
#                                        return), and the whole command's
#                                        wall time minus the 2 s: wasp's own
#                                        checks (perf probe, watch self-test),
#                                        the attach, the end of the run and
#                                        its writes, wasp's 50 ms polling
#   wasp attach PID --duration 60s --no-wait; wasp attach PID --stop
#                                        the latency of --stop (every profile
#                                        written when it returns)
# The first attach into a JVM sets up JVMTI (capabilities, method ids of
# every loaded class, the code that exists): it is printed apart. Prints
# one line per figure: min / median / max in ms. Watch checks are off (the
# figures do not depend on traps).
#
# Environment: BENCH_RUNS=5, WASP_JAVA_JDKS (default: OpenJDK 17, Temurin 25).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/build/bench/attach
RUNS=${BENCH_RUNS:-5}
JDKS=${WASP_JAVA_JDKS:-/usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/temurin-25-jdk-amd64}
WASP=$ROOT/build/bin/wasp
rm -rf "$OUT" && mkdir -p "$OUT/classes"
javac=
for j in $JDKS; do [ -x "$j/bin/javac" ] && { javac=$j/bin/javac; break; }; done
"$javac" --release 17 -d "$OUT/classes" "$ROOT/tests/e2e/java/AttachTarget.java" || exit 1

now_ms() { date +%s%3N; }
stats() {   # label values...: min / median / max
    local label=$1
    shift
    printf '%s\n' "$@" | sort -n | awk -v l="$label" '{v[NR]=$1} END {
        if (NR == 0) { print l ": no data"; exit }
        printf "%-40s min %5d  median %5d  max %5d ms  (%d runs)\n", l, v[1], v[int((NR+1)/2)], v[NR], NR }'
}

for JDK in $JDKS; do
    v=$(basename "$JDK")
    d=$OUT/$v.d
    mkdir -p "$d"
    (cd "$d" && exec "$JDK/bin/java" -cp "$OUT/classes" AttachTarget 600 >"$d/out" 2>"$d/err") &
    pid=$!
    while ! grep -q ready "$d/out" 2>/dev/null; do sleep 0.1; done
    first= later=() tail=() stop=()
    for r in $(seq "$RUNS"); do
        t0=$(now_ms)
        "$WASP" attach "$pid" --duration 2s --no-watch-check -o "$OUT/$v-$r" >"$OUT/$v-$r.log" 2>&1
        t1=$(now_ms)
        ms=$(sed -nE 's/.*attached to JVM [0-9]+ in ([0-9]+) ms.*/\1/p' "$OUT/$v-$r.log")
        if [ -z "$first" ]; then first=$ms; else later+=("$ms"); fi
        tail+=($((t1 - t0 - 2000)))
        "$WASP" attach "$pid" --duration 60s --no-wait --no-watch-check -o "$OUT/$v-s$r" >/dev/null 2>&1
        sleep 1
        "$WASP" attach "$pid" --stop >"$OUT/$v-s$r.stop" 2>&1
        stop+=("$(sed -nE 's/.*in ([0-9]+) ms.*/\1/p' "$OUT/$v-s$r.stop")")
    done
    touch "$d/finish"
    wait "$pid"
    echo "$v (JVM exit status $?, expected 7)"
    stats "  first attach: load to agent return" "$first"
    stats "  later attach: load to agent return" "${later[@]}"
    stats "  wasp attach --duration 2s, minus 2 s" "${tail[@]}"
    stats "  --stop: to every profile written" "${stop[@]}"
done

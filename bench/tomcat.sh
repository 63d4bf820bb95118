#!/usr/bin/env bash
# bench/tomcat.sh - what wasp costs a web server left on: Debian's Tomcat 10
# (JDK 17) serving its static ROOT page to `ab -k -c 8`, alone and under
# `wasp run` with each software sampler, in interleaved rounds.
#
# Each run: a CATALINA_BASE made of /etc/tomcat10 and the ROOT webapp,
# `catalina.sh run` (under `wasp run --sampler S` or not), 10 s of warm-up
# load, then 30 s measured, then SIGTERM. Prints each run's requests per
# second, the medians, and for each sampler its last run's report figures.
# Needs the Debian packages tomcat10 and apache2-utils (apt-get install).
#
# Environment:
#   BENCH_RUNS=3                      rounds
#   BENCH_CONFIGS="plain software ctimer"
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=bench/lib.sh
. bench/lib.sh
runs=${BENCH_RUNS:-3}
configs=${BENCH_CONFIGS:-plain software ctimer}
out=$root/build/bench/tomcat
wasp=$root/build/bin/wasp
for need in /usr/share/tomcat10/bin/catalina.sh /usr/bin/ab /usr/bin/curl; do
    [ -x "$need" ] || { echo "bench: no $need — apt-get install tomcat10 apache2-utils curl" >&2; exit 2; }
done
make -s all >/dev/null
mkdir -p "$out"
export CATALINA_HOME=/usr/share/tomcat10 CATALINA_BASE=$out/base
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}

run() {   # CONFIG ROUND: requests per second of the measured 30 s
    local pre=()
    rm -rf "$CATALINA_BASE" "$out/prof-$1"
    mkdir -p "$CATALINA_BASE"/{conf,logs,temp,work,webapps}
    cp -r /etc/tomcat10/. "$CATALINA_BASE/conf/"
    cp -r /var/lib/tomcat10/webapps/ROOT "$CATALINA_BASE/webapps/"
    [ "$1" != plain ] && pre=("$wasp" run --sampler "$1" -o "$out/prof-$1" --)
    "${pre[@]}" /usr/share/tomcat10/bin/catalina.sh run >"$out/$1-$2.log" 2>&1 &
    local server=$!
    for _ in $(seq 120); do curl -s -o /dev/null http://127.0.0.1:8080/ && break; sleep 0.5; done
    ab -k -c 8 -t 10 http://127.0.0.1:8080/ >/dev/null 2>&1
    ab -k -c 8 -t 30 -n 100000000 http://127.0.0.1:8080/ 2>/dev/null |
        sed -n 's/^Requests per second: *\([0-9.]*\).*/\1/p'
    pkill -TERM -f "Dcatalina.base=$CATALINA_BASE" || true
    wait "$server" || true
}

for c in $configs; do : >"$out/$c.rps"; done
for r in $(seq "$runs"); do
    for c in $configs; do
        v=$(run "$c" "$r")
        echo "$c round $r: $v req/s"
        echo "$v" >>"$out/$c.rps"
    done
done
for c in $configs; do
    echo "$c: median $(median <"$out/$c.rps") req/s over $runs runs"
    [ "$c" = plain ] && continue
    "$wasp" report "$out/prof-$c" --format json 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)
b = r["budget"]
print("  last run: sampler %s, %d context switches charged %.0f ms, est. overhead %.1f%%, %d samples (%d in_syscall)" % (
    r["sampler"], b["switches"], b["switch_ns"] / 1e6, 100 * b["overhead_all"], r["stats"]["samples"],
    r["drops"].get("in_syscall", 0)))'
done

#!/usr/bin/env bash
# bench/real-java.sh - wasp on real Java programs from Debian that nobody here
# wrote (issue 5; findings in docs/real-programs.md).
#
# Programs (Debian packages; missing ones are skipped with the apt-get line):
#   rhino   Rhino 1.7.14 JavaScript engine (package rhino), through Debian's own
#           /usr/bin/rhino launcher script, running bench/real/workload.js
#           (word counts, object sorting, n-body, sieve)
#   saxon   Saxon-HE 9.9 XSLT 3.0 processor (package libsaxonhe-java) grouping,
#           sorting and summing an order book of 100,000 generated orders
#           (bench/real/gen-orders.py, bench/real/report.xsl)
#   jython  Jython 2.7.3 (package jython), through /usr/bin/jython, running
#           bench/real/workload.py (dicts, strings, lists, arithmetic)
# Each program runs once per mode (dead-store, silent-store, silent-load) at
# wasp's default interval; the top pairs of each run are printed compactly
# (leaf frame, its instruction, and the two callers above it).
#
# Environment:
#   REAL_PROGRAMS="rhino saxon jython"
#   REAL_MODES="dead-store silent-store silent-load"
#   REAL_TOP=3                      pairs shown per run
#   REAL_OUT=build/real             run directories (REAL_OUT/<program>-<mode>/)
#   WASP=build/bin/wasp
# The java used is the one the launchers use (/usr/bin/java: JDK 17 here).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

programs=${REAL_PROGRAMS:-rhino saxon jython}
modes=${REAL_MODES:-dead-store silent-store silent-load}
top=${REAL_TOP:-3}
out=${REAL_OUT:-build/real}
wasp=${WASP:-build/bin/wasp}

die() { echo "real-java: $*" >&2; exit 1; }
[[ -x $wasp ]] || die "no $wasp — run make first"
command -v python3 >/dev/null || die "python3 is needed"
mkdir -p "$out"
out=$(cd "$out" && pwd)

need() {  # file package
    [[ -e $1 ]] && return 0
    echo "real-java: skipping: $1 missing (apt-get install $2)" >&2
    return 1
}

program_cmd() {  # name -> command, one word per line; prepares inputs
    case $1 in
        rhino)
            need /usr/bin/rhino rhino || return 1
            printf '%s\n' /usr/bin/rhino bench/real/workload.js 16 ;;
        saxon)
            need /usr/share/java/Saxon-HE.jar libsaxonhe-java || return 1
            [[ -f $out/orders.xml ]] || python3 bench/real/gen-orders.py 100000 "$out/orders.xml"
            printf '%s\n' java -cp /usr/share/java/Saxon-HE.jar net.sf.saxon.Transform \
                "-s:$out/orders.xml" -xsl:bench/real/report.xsl "-o:$out/report.xml" -repeat:5 ;;
        jython)
            need /usr/bin/jython jython || return 1
            printf '%s\n' /usr/bin/jython bench/real/workload.py 6 ;;
        *) die "unknown program $1 (rhino saxon jython)" ;;
    esac
}

summarise() {  # run-dir label
    "$wasp" report "$1" --format json --top 1000000 >"$1.json"
    "$wasp" report "$1" --format json --top "$top" | python3 -c '
import json, sys
r = json.load(sys.stdin)
t = r["totals"]
print("== %s: %.2f%% wasteful (approx %.2f%%), %d samples, %d armed, %d traps, %d pairs" % (
    sys.argv[1], 100 * t["fraction"], 100 * t["approx_fraction"], t["samples"], t["armed"],
    t["traps"], r["pairs_total"]))
def side(s):
    fr = s["frames"]
    lead = "%s (%s:%s)  %s" % (fr[0]["function"], fr[0]["file"], fr[0]["line"], s.get("instruction", ""))
    callers = " <- ".join("%s:%s" % (f["function"].rsplit(".", 2)[-2] + "." + f["function"].rsplit(".", 1)[-1]
                                     if f["function"].count(".") >= 1 else f["function"], f["line"]) for f in fr[1:3])
    return lead + ("\n          <- " + callers if callers else "")
# Pairs whose either side is a stack-slot access (spills, outgoing arguments,
# stack banging, fences on the stack): correct at machine level, rarely actionable.
import re
allp = json.load(open(sys.argv[2]))["pairs"]
tb = sum(p["bytes"] for p in allp) or 1
stack = sum(p["bytes"] for p in allp
            if any(re.search(r"\(%rsp[),]", p[k].get("instruction", "")) for k in ("watch", "trap")))
print("   stack-slot pairs: %.1f%% of monitored bytes" % (100.0 * stack / tb))
for i, p in enumerate(r["pairs"], 1):
    print("#%d %6.2f%% (approx %5.2f%%) count %d bytes %d" % (i, 100 * p["fraction"], 100 * p["approx_fraction"],
          p["count"], p["bytes"]))
    print("   C1  " + side(p["watch"]))
    print("   C2  " + side(p["trap"]))
' "$2" "$1.json"
}

for prog in $programs; do
    cmd=()
    mapfile -t cmd < <(program_cmd "$prog") || true
    ((${#cmd[@]})) || continue
    for mode in $modes; do
        dir=$out/$prog-$mode
        rm -rf "$dir"
        echo "\$ wasp run --mode $mode -o $dir -- ${cmd[*]}" >&2
        start=$SECONDS
        "$wasp" run --mode "$mode" -o "$dir" -- "${cmd[@]}" >"$dir.out" 2>&1 ||
            die "$prog ($mode) failed (exit $?): see $dir.out"
        echo "   ($((SECONDS - start)) s)" >&2
        summarise "$dir" "$prog $mode"
    done
done

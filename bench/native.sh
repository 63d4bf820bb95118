#!/usr/bin/env bash
# bench/native.sh - what wasp costs a native program (`make bench`).
#
# Builds the workloads in bench/workloads/ (plus bench/measure.c, the timing
# wrapper, and bench/sigcount.c, a SIGTRAP counter) into a private directory
# build/bench/native.XXXXXX/, then runs each workload, round after round, in
# these configurations (order rotated per round, so baseline and profiled runs
# interleave):
#   base      uninstrumented
#   <T>       LD_PRELOAD=libwasp.so at sampling interval T; "default" passes no
#             interval, so the library's own default applies (read from
#             src/engine/options.h for the label, checked against the profile)
#   empty     LD_PRELOAD=libwasp.so with empty-handler=1 at BENCH_EMPTY_INTERVAL:
#             every signal is delivered and ignored, nothing is armed
# and prints one table row per workload and interval (see docs/benchmarks.md).
#
# Environment:
#   BENCH_RUNS=5                   rounds (medians are taken over them)
#   BENCH_WORKLOADS="stream hash fp mt"
#   BENCH_INTERVALS="default 1ms"  any wasp durations, e.g. "1ms 2ms 5ms 10ms 20ms", or
#                                  default:SAMPLER (the default interval, that sampler)
#   BENCH_EMPTY_INTERVAL=200us     interval of the empty-handler runs
#   BENCH_MODE=                    wasp mode (empty: the library's default)
#   BENCH_QUIET_WAIT=60            seconds the whole benchmark may spend waiting,
#                                  before measurements, for other processes' load to
#                                  drop below a quarter core (0: never wait)
#   BENCH_RETRIES=1                re-runs of a measurement disturbed by other load
#   WASP_LIB=build/lib/libwasp.so  library under test
# Raw data: build/bench/native-results.tsv (one line per run); analysis:
# bench/analyze.py (python3 bench/analyze.py build/bench/native-results.tsv).
# BENCH_KEEP=1 keeps the working directory (build/bench/native.*/: binaries,
# the library copy, stderr.log).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source bench/rounds.sh

runs=${BENCH_RUNS:-5}
workloads=${BENCH_WORKLOADS:-stream hash fp mt}
intervals=${BENCH_INTERVALS:-default 1ms}
empty_interval=${BENCH_EMPTY_INTERVAL:-200us}
mode=${BENCH_MODE:-}
quiet_wait=${BENCH_QUIET_WAIT:-60}
retries=${BENCH_RETRIES:-1}
lib=$(realpath -m "${WASP_LIB:-build/lib/libwasp.so}")
out=build/bench
cc=${CC:-gcc}
keep=${BENCH_KEEP:-0}

die() { echo "bench: $*" >&2; exit 1; }

[[ -f $lib ]] || die "no $lib — run make first"
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive integer, not '$runs'"
command -v python3 >/dev/null || die "python3 is needed for the analysis (make deps installs it)"

default_ns=$(bench_default_ns)

# Everything of this invocation lives in its own directory, so two benchmarks
# started at once (or a rebuild meanwhile) cannot mix their files; only the
# final results land in build/bench/native-results.tsv. Kept on failure.
mkdir -p "$out"
work=$(mktemp -d "$root/$out/native.XXXXXX")
finish() {
    local rc=$?
    if ((rc == 0 && keep == 0)); then rm -rf "$work"; else echo "bench: files kept in $work" >&2; fi
}
trap finish EXIT

# --- build -----------------------------------------------------------------
bin=$work/bin
mkdir -p "$bin"
for w in $workloads; do
    [[ -f bench/workloads/$w.c ]] || die "no workload bench/workloads/$w.c"
    "$cc" -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -o "$bin/$w" "bench/workloads/$w.c" -lm -lpthread
done
"$cc" -std=c11 -O2 -Wall -Wextra -Werror -o "$bin/measure" bench/measure.c
"$cc" -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -o "$bin/sigcount.so" bench/sigcount.c -ldl
# A private copy, so that a rebuild during the benchmark cannot mix two libraries.
cp "$lib" "$bin/libwasp.so"
lib=$bin/libwasp.so

# --- measure ---------------------------------------------------------------
results=$work/results.tsv
sigfile=$work/sigcount.txt
mainfile=$work/maincpu.txt
rundir=$work/runs
errlog=$work/stderr.log   # the workloads' and the library's messages
mkdir -p "$rundir"
printf 'workload\tconfig\tround\tinterval_ns\twall\tuser\tsys\trss_kb\tother\tsteal\tsignals\tsamples\tarmed\ttraps\tsample_ns\ttrap_ns\tmain_cpu\tprofile_interval\n' >"$results"

configs=(base)
for iv in $intervals; do configs+=("$iv"); done
configs+=(empty)

interval_ns() {  # label -> ns (wasp duration syntax: ns, us, ms, s, bare = ns)
    case $1 in
        default|default:*) echo "$default_ns" ;;
        *) python3 -c 'import re,sys
m = re.fullmatch(r"([0-9.]+)(ns|us|ms|s|)", sys.argv[1])
if not m: sys.exit("bench: bad interval " + sys.argv[1])
print(int(float(m.group(1)) * {"ns": 1, "": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[m.group(2)]))' "$1" ;;
    esac
}

# One measurement: prints the TSV line's measured fields.
measure_once() {  # workload config round
    local w=$1 cfg=$2 r=$3 dir=$rundir/$1-$2-$3 opts env=(-e "BENCH_MAINCPU=$mainfile")
    rm -rf "$dir"
    if [[ $cfg != base ]]; then
        opts="dir=$dir"
        [[ -n $mode ]] && opts+=",mode=$mode"
        case $cfg in
            default) ;;
            default:*) opts+=",sampler=${cfg#default:}" ;;   # the default interval, a sampler named
            empty) opts+=",interval=$empty_interval,empty-handler=1" ;;
            *) opts+=",interval=$cfg,budget=off" ;;   # the cost of that interval, not of the budget
        esac
        env+=(-e "LD_PRELOAD=$bin/sigcount.so:$lib" -e "WASP_OPTIONS=$opts" -e "BENCH_SIGCOUNT=$sigfile")
    fi
    local line pid wall user sys rss status other steal
    line=$("$bin/measure" "${env[@]}" -- "$bin/$w" 2>>"$errlog")
    read -r pid wall user sys rss status other steal <<<"$line"
    [[ $status == 0 ]] || die "$w ($cfg) exited with status $status (see $errlog)"
    local main_cpu
    main_cpu=$(awk -v p="$pid" '$1 == p { c = $2 } END { print c + 0 }' "$mainfile")
    local signals=0 stats="0 0 0 0 0" piv=-
    if [[ $cfg != base ]]; then
        signals=$(awk -v p="$pid" '$1 == p { n = $2 } END { print n + 0 }' "$sigfile")
        if compgen -G "$dir/$pid/*.wasp" >/dev/null; then
            stats=$(awk -F'\t' '$1 == "stat" { s[$2] += $3 } $1 == "interval" { iv = $2 }
                END { printf "%d %d %d %d %d %s", s["samples"], s["armed"], s["traps"], s["sample_ns"], s["trap_ns"], iv }' \
                "$dir/$pid"/*.wasp)
            piv=${stats##* }
            stats=${stats% *}
        elif [[ $cfg != empty ]]; then
            die "$w ($cfg): no profile in $dir/$pid"
        fi
    fi
    rm -rf "$dir"
    echo "$wall $user $sys $rss $other $steal $signals $stats $main_cpu $piv"
}

empty_ns=$(interval_ns "$empty_interval")
declare -A config_ns=([base]=0 [empty]=$empty_ns)
for iv in $intervals; do config_ns[$iv]=$(interval_ns "$iv"); done

# Busy CPU ticks of the whole machine over 0.3 s, in hundredths of a core.
busy_now() {
    local a b
    read -ra a < <(grep '^cpu ' /proc/stat)
    sleep 0.3
    read -ra b < <(grep '^cpu ' /proc/stat)
    local ticks=$(((b[1] + b[2] + b[3] + b[6] + b[7] + b[8]) - (a[1] + a[2] + a[3] + a[6] + a[7] + a[8])))
    echo $((ticks * 100 / 30))  # USER_HZ is 100: ticks per 0.3 s -> percent of one core
}

# Waits until other processes leave the machine (almost) idle, within the budget.
waited=0
wait_quiet() {
    ((waited < quiet_wait)) || return 0
    while (($(busy_now) > 25)); do
        ((waited < quiet_wait)) || return 0
        sleep 1
        waited=$((waited + 1))
    done
}

# Each round visits the configurations in a rotated order.
echo "wasp native benchmark: $runs round(s) of {${configs[*]}} x {$workloads}; default interval $((default_ns / 1000)) us" >&2
before_measure() { wait_quiet; }
bench_rounds $workloads
((waited == 0)) || echo "  waited ${waited} s in all for other processes to quiet down" >&2

cp "$results" "$out/native-results.tsv.$$" && mv "$out/native-results.tsv.$$" "$out/native-results.tsv"
python3 bench/analyze.py "$out/native-results.tsv" --default-ns "$default_ns" --empty-interval "$empty_interval" \
    ${mode:+--mode "$mode"}

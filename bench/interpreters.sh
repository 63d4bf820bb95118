#!/usr/bin/env bash
# bench/interpreters.sh - what a sample costs in programs whose hot code is a
# few very large functions: the dispatch loops of interpreters from Debian
# (CPython's _PyEval_EvalFrameDefault is 43 KB, SQLite's sqlite3VdbeExec
# larger). A sample or trap at a pc the decode caches have not seen sweeps
# the function it is in (docs/how-it-works.md, "Kept images"), so in such
# code the handler's cost, and with it how many samples the budget allows,
# is decided by how fast a sweep is.
#
# Programs (Debian packages; missing ones are skipped with the apt-get line):
#   python3  a dict-update loop          perl   a hash-append loop
#   sqlite3  inserts, an index, a group-by and an update in :memory:
# Each runs BENCH_RUNS times per wasp build and configuration:
#   default    no options (10 ms, the 2% budget)
#   1ms-free   --interval 1ms --budget off
# and the medians of samples, handler µs per event, mean interval and the
# estimated overhead are printed, one row per program, build and configuration.
#
# Environment:
#   BENCH_RUNS=3
#   BENCH_PROGRAMS="python3 perl sqlite3"
#   BENCH_WASP="build/bin/wasp"   one or more wasp binaries to compare
#   BENCH_CONFIGS="default 1ms-free"
#   BENCH_OUT=build/bench/interp  run directories
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

runs=${BENCH_RUNS:-3}
programs=${BENCH_PROGRAMS:-python3 perl sqlite3}
wasps=${BENCH_WASP:-build/bin/wasp}
configs=${BENCH_CONFIGS:-default 1ms-free}
out=${BENCH_OUT:-build/bench/interp}

die() { echo "interpreters: $*" >&2; exit 1; }
command -v python3 >/dev/null || die "python3 is needed (apt-get install python3)"
for w in $wasps; do [[ -x $w ]] || die "no $w — run make first"; done
mkdir -p "$out"
out=$(cd "$out" && pwd)

cat > "$out/work.sql" <<'EOF'
create table t(a integer primary key, b text, c real);
with recursive n(x) as (select 1 union all select x+1 from n where x<1500000)
  insert into t select x, 'v'||(x%977), x*1.5 from n;
create index ib on t(b);
select b, count(*), sum(c) from t group by b order by 2 desc limit 3;
update t set c=c where a%2=0;
select count(*) from t where b like 'v1%';
EOF

program_cmd() {  # name -> the command, one word per line
    case $1 in
        python3)
            [[ -x /usr/bin/python3 ]] || { echo "skipping python3 (apt-get install python3)" >&2; return 1; }
            printf '%s\n' /usr/bin/python3 -c \
                'd = {}; exec("for i in range(24000000):\n    k = i % 5000\n    d[k] = d.get(k, 0) + i"); print(len(d))' ;;
        perl)
            [[ -x /usr/bin/perl ]] || { echo "skipping perl (apt-get install perl)" >&2; return 1; }
            # shellcheck disable=SC2016  # Perl's code, not the shell's
            printf '%s\n' /usr/bin/perl -e \
                'my %h; for my $i (1..40000000) { $h{$i % 10000} .= "x" if $i % 3 } print scalar(keys %h), "\n"' ;;
        sqlite3)
            [[ -x /usr/bin/sqlite3 ]] || { echo "skipping sqlite3 (apt-get install sqlite3)" >&2; return 1; }
            printf '%s\n' /usr/bin/sqlite3 :memory: ".read $out/work.sql" ;;
        *) die "unknown program $1" ;;
    esac
}

config_args() {
    case $1 in
        default) ;;
        1ms-free) echo "--interval 1ms --budget off" ;;
        *) die "unknown configuration $1" ;;
    esac
}

# One run: samples, µs/event, mean interval (ms), est. overhead max (%).
measure() {  # wasp config dir command...
    local wasp=$1 config=$2 dir=$3
    shift 3
    rm -rf "$dir"
    # shellcheck disable=SC2046
    "$wasp" run $(config_args "$config") -o "$dir" -- "$@" >/dev/null 2>"$dir.err" || true
    "$wasp" report "$dir" --format json | python3 -c '
import json, sys
d = json.load(sys.stdin)
s = d["stats"]
events = s.get("samples", 0) + s.get("traps", 0)
ns = s.get("sample_ns", 0) + s.get("trap_ns", 0)
b = d["budget"]
print(s.get("samples", 0), round(ns / 1000 / events, 1) if events else 0,
      round(b["mean_interval"] / 1e6, 1), round(100 * b["overhead_max"], 2))'
}

median() { sort -n | awk '{a[NR]=$1} END {print NR ? a[int((NR+1)/2)] : 0}'; }

printf '%-8s %-28s %-9s %8s %9s %10s %9s\n' program wasp config samples us/event interval overhead
for p in $programs; do
    words=$(program_cmd "$p") || continue
    mapfile -t cmd <<< "$words"
    for w in $wasps; do
        for c in $configs; do
            : > "$out/rows"
            for r in $(seq "$runs"); do
                measure "$w" "$c" "$out/$p-$c-$r" "${cmd[@]}" >> "$out/rows"
            done
            printf '%-8s %-28s %-9s %8s %9s %8sms %8s%%\n' "$p" "$w" "$c" \
                "$(cut -d' ' -f1 "$out/rows" | median)" "$(cut -d' ' -f2 "$out/rows" | median)" \
                "$(cut -d' ' -f3 "$out/rows" | median)" "$(cut -d' ' -f4 "$out/rows" | median)"
        done
    done
done

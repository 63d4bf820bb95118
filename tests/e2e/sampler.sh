#!/bin/sh
# tests/e2e/sampler.sh - `wasp run --sampler auto|pmu|software|ctimer` on this machine.
#
# Without a hardware PMU in sysfs (our Firecracker VMs): auto runs the
# program with a software sampler after exactly one "[wasp] INFO using the
# software sampler: ..." line, the CPU-time timer (ctimer) at the default
# 10 ms and the task clock (software) at 1 ms; an explicit software choice prints no INFO
# line; --sampler pmu prints exactly one [wasp] ERROR line, exits non-zero
# and never starts the program. With a PMU, auto and pmu must both record
# the pmu sampler (never run: we have no such machine). Either way the
# profile names the sampler the run used. Assumes `make all` was done.
# Prints "ok sampler" or "FAIL sampler: reason"; exits 0 or 1.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WASP=$ROOT/build/bin/wasp
SYSFS=/sys/bus/event_source/devices

fail() { echo "FAIL sampler: $*"; exit 1; }

[ -x "$WASP" ] || fail "no $WASP: run make"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/wasp-sampler.XXXXXX") || fail "mktemp"
trap 'rm -rf "$TMP"' EXIT

# Sampler choice needs no trap: where watchpoints never fire, runs go on
# with --no-watch-check (tests/e2e/run checks the refusal itself).
NOWATCH=$("$WASP" doctor --watch >/dev/null 2>&1 || echo --no-watch-check)

# run NAME SAMPLER [FLAGS]: profiles a command that leaves a mark, into $TMP/NAME.
run() {
    name=$1 sampler=$2
    shift 2
    "$WASP" run $NOWATCH --sampler "$sampler" "$@" -o "$TMP/$name" -- sh -c "touch '$TMP/$name.ran'" 2>"$TMP/$name.err"
}

# recorded NAME: the sampler the run's profiles say they used.
recorded() {
    "$WASP" report "$TMP/$1" --format json 2>/dev/null |
        sed -n 's/^ *"sampler": *"\([a-z]*\)".*/\1/p' | head -n 1
}

count() { grep -c "$1" "$2"; }

if ls "$SYSFS" 2>/dev/null | grep -qx 'cpu\|cpu_core\|ibs_op'; then
    run auto auto || fail "auto run failed: $(head -n 1 "$TMP/auto.err")"
    [ "$(recorded auto)" = pmu ] || fail "a PMU is listed, but auto recorded '$(recorded auto)'"
    run pmu pmu || fail "--sampler pmu failed: $(head -n 1 "$TMP/pmu.err")"
    [ "$(recorded pmu)" = pmu ] || fail "--sampler pmu recorded '$(recorded pmu)'"
else
    run auto auto || fail "auto run failed: $(head -n 1 "$TMP/auto.err")"
    [ -e "$TMP/auto.ran" ] || fail "auto did not run the program"
    [ "$(count '^\[wasp\] INFO' "$TMP/auto.err")" = 1 ] ||
        fail "auto printed $(count '^\[wasp\] INFO' "$TMP/auto.err") INFO lines, want 1"
    grep -q '^\[wasp\] INFO using the software sampler: no hardware PMU here .* — ' "$TMP/auto.err" ||
        fail "auto's INFO line does not say why and the fix: $(grep INFO "$TMP/auto.err")"
    [ "$(recorded auto)" = ctimer ] || fail "auto at 10 ms recorded '$(recorded auto)'"
    run auto1ms auto --interval 1ms || fail "auto run at 1 ms failed: $(head -n 1 "$TMP/auto1ms.err")"
    [ "$(recorded auto1ms)" = software ] || fail "auto at 1 ms recorded '$(recorded auto1ms)'"

    "$WASP" run --sampler pmu -o "$TMP/pmu" -- sh -c "touch '$TMP/pmu.ran'" 2>"$TMP/pmu.err"
    rc=$?
    [ "$rc" != 0 ] || fail "--sampler pmu without a PMU exited 0"
    [ -e "$TMP/pmu.ran" ] && fail "--sampler pmu without a PMU started the program"
    [ "$(wc -l <"$TMP/pmu.err")" = 1 ] || fail "--sampler pmu printed $(wc -l <"$TMP/pmu.err") lines, want 1"
    grep -q '^\[wasp\] ERROR hardware sampling unavailable: .* — ' "$TMP/pmu.err" ||
        fail "--sampler pmu error: $(cat "$TMP/pmu.err")"
fi

run soft software || fail "software run failed: $(head -n 1 "$TMP/soft.err")"
[ -e "$TMP/soft.ran" ] || fail "--sampler software did not run the program"
grep -q '^\[wasp\] INFO' "$TMP/soft.err" && fail "--sampler software printed: $(grep INFO "$TMP/soft.err")"
[ "$(recorded soft)" = software ] || fail "--sampler software recorded '$(recorded soft)'"
run timer ctimer --interval 1ms || fail "ctimer run failed: $(head -n 1 "$TMP/timer.err")"
grep -q '^\[wasp\] INFO' "$TMP/timer.err" && fail "--sampler ctimer printed: $(grep INFO "$TMP/timer.err")"
[ "$(recorded timer)" = ctimer ] || fail "--sampler ctimer recorded '$(recorded timer)'"

"$WASP" run --sampler hardware -- true 2>"$TMP/bad.err"
[ $? = 2 ] || fail "--sampler hardware did not exit 2"
grep -q "unknown sampler 'hardware' — use auto, pmu, software or ctimer" "$TMP/bad.err" ||
    fail "bad --sampler message: $(head -n 1 "$TMP/bad.err")"

echo "ok sampler"

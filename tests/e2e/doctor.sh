#!/bin/sh
# tests/e2e/doctor.sh - `wasp doctor` on this machine.
#
# Checks that every section is printed, that the verdict line, the exit
# status and the [wasp] ERROR line agree, that the watch-slot count of the
# verdict is the one the breakpoint probe measured, and - on a machine whose
# sysfs lists no cpu, cpu_core or ibs_op PMU (our Firecracker VMs) - that
# `auto` picks the software sampler and says there is no hardware PMU.
# Assumes `make all` was done. Prints "ok doctor" or "FAIL doctor: reason";
# exits 0 or 1.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WASP=$ROOT/build/bin/wasp
SYSFS=/sys/bus/event_source/devices

fail() { echo "FAIL doctor: $*"; exit 1; }

[ -x "$WASP" ] || fail "no $WASP: run make"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/wasp-doctor.XXXXXX") || fail "mktemp"
trap 'rm -rf "$TMP"' EXIT

"$WASP" doctor >"$TMP/out" 2>"$TMP/err"
rc=$?

for label in kernel cpu perf_event_paranoid PMUs breakpoints "watch self-test" "task clock" "cpu timer" costs "sampler (auto)" JDKs SIGTRAP seccomp; do
    grep -q "^  $label  *[^ ]" "$TMP/out" || fail "no '$label' line in: $(head -c 300 "$TMP/out")"
done
grep -q "^  PMUs .* (in $SYSFS)\$" "$TMP/out" || fail "PMUs line does not name $SYSFS"

case $rc in
0)
    grep -q "^wasp can profile here: \(software\|pmu\) sampler, [1-4] watch slots\? per thread that fires\?\.\$" "$TMP/out" ||
        fail "exit 0 without a 'can profile' verdict: $(tail -n 1 "$TMP/out")"
    [ -s "$TMP/err" ] && fail "exit 0 but stderr says: $(head -n 1 "$TMP/err")"
    # What a sample and a context switch cost, measured as `wasp run` does.
    grep -q "^  costs  *a sample's signal [0-9.]* µs of CPU; each context switch of a sampled thread +[0-9.]* µs\$" "$TMP/out" ||
        fail "a profiling machine without measured costs: $(grep '^  costs ' "$TMP/out")"
    grep -q "^  cpu timer  *\(fires every [0-9.]* ms of CPU (the kernel's tick)\|did not fire within 50 ms of CPU\)" "$TMP/out" ||
        fail "the cpu timer line says neither its tick nor that it did not fire: $(grep '^  cpu timer ' "$TMP/out")"
    slots=$(sed -n 's/^wasp can profile here: .* sampler, \([0-9]\) watch slots\{0,1\} per thread that fires\{0,1\}\.$/\1/p' "$TMP/out")
    grep "^  watch self-test " "$TMP/out" | grep -q "^  watch self-test  *watchpoints fire: $slots of\|only $slots of" ||
        fail "verdict says $slots slots fire, the self-test says: $(grep '^  watch self-test ' "$TMP/out")"
    ;;
1)
    grep -q "^wasp cannot profile here: .* — " "$TMP/out" || fail "exit 1 without a verdict naming the fix"
    [ "$(grep -c '^\[wasp\] ERROR' "$TMP/err")" = 1 ] || fail "exit 1 without exactly one [wasp] ERROR line"
    ;;
*)
    fail "exit status $rc: $(head -n 1 "$TMP/err")"
    ;;
esac

# No hardware PMU in sysfs: auto must fall back to software and say why.
if ! ls "$SYSFS" 2>/dev/null | grep -qx 'cpu\|cpu_core\|ibs_op'; then
    grep -q "^  memory events  *none" "$TMP/out" || fail "no PMU here, but memory events are listed"
    grep -q "^  sampler (auto)  *software (ctimer from 10 ms intervals, task clock below), every mode: no hardware PMU here .* — " "$TMP/out" ||
        fail "no PMU here, but: $(grep '^  sampler (auto)' "$TMP/out")"
    if [ "$rc" = 0 ]; then
        grep -q "^wasp can profile here: software sampler" "$TMP/out" || fail "verdict does not say software"
    fi
fi

# The self-test alone (what the suite asks) agrees with the full report:
# exit 0 only where watchpoints fire; where they open but never fire both
# say so and the full report refuses.
"$WASP" doctor --watch >"$TMP/watch" 2>&1
wrc=$?
case $wrc in
0) [ "$rc" = 0 ] || fail "doctor --watch says watchpoints fire, doctor exits $rc" ;;
1) [ "$rc" = 1 ] || fail "doctor --watch says watchpoints do not fire, doctor exits $rc"
   grep -q "^never-fires breakpoints open but never fire (the hypervisor does not pass debug registers through)" "$TMP/watch" ||
       grep -q "^partial " "$TMP/watch" || fail "doctor --watch exit 1 says: $(head -n 1 "$TMP/watch")"
   grep -q "^wasp cannot profile here: \(breakpoints open but never fire\|only \)" "$TMP/out" ||
       fail "watchpoints do not fire, but the verdict is: $(tail -n 1 "$TMP/out")" ;;
2) [ "$rc" = 1 ] || fail "doctor --watch says no breakpoint opens, doctor exits $rc" ;;
*) fail "doctor --watch exited $wrc: $(head -n 1 "$TMP/watch")" ;;
esac

"$WASP" doctor --verbose >/dev/null 2>"$TMP/usage"
[ $? = 2 ] || fail "an unknown argument does not exit 2"
grep -q '^\[wasp\] ERROR' "$TMP/usage" || fail "an unknown argument gives no [wasp] ERROR line"

echo "ok doctor"

#!/usr/bin/env bash
# tests/e2e/flush.sh - checkpoints (--flush, docs/testing.md): a program
# killed with SIGKILL together with its guardian (as the OOM killer kills
# every process on the same memory) leaves, in its run directory,
# checkpoints that `wasp report` reads as they are; one that crashes leaves
# final profiles its guardian wrote after it; a program that ends normally
# leaves each thread counted once and no checkpoint.
#
# Cases (run side by side: each lasts ~25 s of wall-clock time):
#   native_kill, java_kill_JDK  busy threads, --flush 5s, SIGKILL at 25 s
#       (a native process's guardian first; a JVM has none):
#       every busy thread's checkpoint holds >= 60% of the CPU time the
#       thread had used (samples x interval; the program writes each busy
#       thread's CPU clock to a file every second: 15 of 25 s, as a share,
#       since on a loaded machine a thread gets less than 15 s of CPU in 25)
#       and reaches >= 15 s into the thread; the report exits 0 with no
#       error and says the threads are from checkpoints.
#   native_segv  busy threads, the main thread segfaults at 12 s (default
#       action), having written their CPU time just before: its guardian
#       writes the final profiles, which hold >= 80% of that time and reach
#       >= 7 s; no checkpoint is left.
#   native_exit, java_exit_JDK  --flush 1s, normal end: no checkpoint
#       left, the report's threads and samples equal the final profiles'.
#   fork_loop  --flush 1s while main forks child after child (no exec) and
#       four threads keep the checkpoint thread busy: no deadlock (the
#       child re-makes the locks the checkpoint thread may have held), every
#       child exits 0, the report reads.
#   dir_gone  the run directory removed while the program runs: the
#       checkpoint thread stops, and nothing makes the directory again.
# Sampling needs no trap, so all of this runs on any machine. Prints
# "ok NAME" or "FAIL NAME: reason", ends with "flush: N passed, M failed".
# Environment: WASP_FLUSH_JDKS (JDK homes; default OpenJDK 17 and Temurin
# 25 where present), WASP_E2E_KEEP=1 keeps the temporary directory.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRC=$ROOT/tests/e2e
WASP=$ROOT/build/bin/wasp
CHECK=$SRC/flush_check.py
JDKS=${WASP_FLUSH_JDKS:-/usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/temurin-25-jdk-amd64}
KILL_AT=25
INTERVAL=2ms
INTERVAL_NS=2000000
TMP=$(mktemp -d "${TMPDIR:-/tmp}/wasp-flush.XXXXXX") || exit 2
if [ "${WASP_E2E_KEEP:-0}" = 1 ]; then echo "# keeping $TMP"; else trap 'rm -rf "$TMP"' EXIT; fi
ulimit -c 0

passed=0
failed=0
ok()   { echo "ok $1${2:+  # $2}"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
summary() {
    echo "flush: $passed passed, $failed failed"
    [ "$failed" = 0 ]
    exit
}

NOWATCH=
"$WASP" doctor --watch >/dev/null 2>&1 || NOWATCH=--no-watch-check
if ! gcc -O1 -g -pthread -o "$TMP/flush_busy" "$SRC/flush_busy.c" 2>"$TMP/build.err"; then
    fail build "gcc failed: $(head -n 1 "$TMP/build.err")"
    echo "# judged after $SECONDS s"
summary
fi
JAVA_OK=
for j in $JDKS; do
    if [ -x "$j/bin/javac" ] && "$j/bin/javac" --release 17 -d "$TMP/classes" \
        "$SRC/java/FlushBusy.java" 2>"$TMP/javac.err"; then
        JAVA_OK=1
        break
    fi
done

# wasp_run NAME FLUSH CMD...: `wasp run` in the background, into $TMP/NAME;
# its exit status lands in $TMP/NAME.rc (124: hung for 3 minutes). The
# checks weigh samples by the requested interval: --budget off keeps it.
wasp_run() {
    local name=$1 flush=$2
    shift 2
    ( timeout 180 "$WASP" run $NOWATCH --budget off --interval $INTERVAL --flush "$flush" -o "$TMP/$name" -- "$@" \
        >"$TMP/$name.out" 2>"$TMP/$name.err"
      echo $? >"$TMP/$name.rc" ) &
}

# pid_of NAME: the profiled process's pid (its directory in the run), once
# it has one (waits up to 20 s).
pid_of() {
    local i d
    for i in $(seq 200); do
        for d in "$TMP/$1"/*/; do
            [ -d "$d" ] && { basename "$d"; return 0; }
        done
        sleep 0.1
    done
    return 1
}

# kill_at NAME SECONDS: SIGKILL NAME's process SECONDS after its busy
# threads started (they have run a second when the program first writes
# its CPU file; a JVM takes a while before that).
kill_at() {
    local name=$1 at=$2 pid i
    ( pid=$(pid_of "$name") || exit
      for i in $(seq 600); do
          [ -s "$TMP/$name.cpu" ] && break
          sleep 0.1
      done
      sleep "$((at - 1))"
      pkill -KILL -P "$pid" -x wasp-guardian
      kill -KILL "$pid" ) &
}

# judge_partial NAME WANT_RC partial|guarded tid|thread RATIO SAMPLING_MS
# (flush_check.py): partial, a killed process's threads left checkpoints,
# and wasp run and the report say so; guarded, its guardian wrote their
# final profiles, and neither speaks of checkpoints or a missing profile.
judge_partial() {
    local name=$1 want=$2 kind=$3 msg rc said
    rc=$(cat "$TMP/$name.rc" 2>/dev/null)
    if [ "$rc" != "$want" ]; then
        fail "$name" "wasp run exited ${rc:-?}, expected $want: $(tail -n 1 "$TMP/$name.err")"
        return
    fi
    said=$(grep -c "threads\? left only a checkpoint: the program did not end" "$TMP/$name.err")
    if [ "$kind" = partial ] && [ "$said" = 0 ]; then
        fail "$name" "wasp run does not say the threads left only checkpoints"
        return
    elif [ "$kind" = guarded ] && grep -q "checkpoint\|incomplete" "$TMP/$name.err"; then
        fail "$name" "wasp run speaks of: $(grep -m1 "checkpoint\|incomplete" "$TMP/$name.err")"
        return
    fi
    "$WASP" report "$TMP/$name" >"$TMP/$name.txt" 2>"$TMP/$name.rerr"
    rc=$?
    if [ $rc != 0 ] || grep -q "ERROR\|incomplete" "$TMP/$name.rerr"; then
        fail "$name" "wasp report exited $rc: $(grep -m1 "ERROR\|incomplete" "$TMP/$name.rerr")"
        return
    fi
    said=$(grep -c "threads from checkpoints (the program did not end" "$TMP/$name.txt")
    if [ "$kind" = partial ] && [ "$said" = 0 ]; then
        fail "$name" "the report does not say its threads are from checkpoints"
        return
    elif [ "$kind" = guarded ] && [ "$said" != 0 ]; then
        fail "$name" "the report says its threads are from checkpoints"
        return
    fi
    if msg=$(python3 "$CHECK" "$kind" "$TMP/$name" "$TMP/$name.cpu" "$4" "$5" "$6"); then
        ok "$name" "$msg"
    else
        fail "$name" "$msg"
    fi
}

judge_final() {
    local name=$1 msg rc
    rc=$(cat "$TMP/$name.rc" 2>/dev/null)
    if [ "$rc" != 0 ]; then
        fail "$name" "wasp run exited ${rc:-?}: $(tail -n 1 "$TMP/$name.err")"
        return
    fi
    if ! "$WASP" report "$TMP/$name" --format json -o "$TMP/$name.json" 2>"$TMP/$name.rerr"; then
        fail "$name" "wasp report failed: $(tail -n 1 "$TMP/$name.rerr")"
        return
    fi
    if grep -q checkpoint "$TMP/$name.rerr"; then
        fail "$name" "the report speaks of checkpoints: $(grep -m1 checkpoint "$TMP/$name.rerr")"
        return
    fi
    if msg=$(python3 "$CHECK" final "$TMP/$name" "$TMP/$name.json"); then
        ok "$name" "$msg"
    else
        fail "$name" "$msg"
    fi
}

# --- start everything, side by side --------------------------------------------

JAVA_CASES=
wasp_run native_kill 5s "$TMP/flush_busy" 3 600 wait "$TMP/native_kill.cpu"
kill_at native_kill $KILL_AT
wasp_run native_segv 5s "$TMP/flush_busy" 3 12 segv "$TMP/native_segv.cpu"
wasp_run native_exit 1s "$TMP/flush_busy" 3 4 exit
if [ -n "$JAVA_OK" ]; then
    for j in $JDKS; do
        [ -x "$j/bin/java" ] || continue
        v=$(basename "$j" | grep -oE '[0-9]+' | head -n 1)
        JAVA_CASES="$JAVA_CASES $v"
        wasp_run "java_kill_$v" 5s "$j/bin/java" -cp "$TMP/classes" FlushBusy 2 600 wait \
            "$TMP/java_kill_$v.cpu"
        kill_at "java_kill_$v" $KILL_AT
        wasp_run "java_exit_$v" 1s "$j/bin/java" -cp "$TMP/classes" FlushBusy 2 4 exit
    done
else
    fail java "no JDK could compile FlushBusy.java: $(head -n 1 "$TMP/javac.err" 2>/dev/null)"
fi
wasp_run fork_loop 1s "$TMP/flush_busy" 4 6 fork
wasp_run dir_gone 1s "$TMP/flush_busy" 2 4 exit
# Removed once the process has made its directory: a fixed 2.5 s raced a slow
# start (a fresh-clone CI run, JVMs starting beside it: the directory was
# removed before the program made it, as it should, at its start).
( pid_of dir_gone >/dev/null && sleep 0.5; rm -rf "${TMP:?}/dir_gone" ) &

# Bad values fail before anything runs.
for bad in 0 500ms 2h soon 5 -1s ""; do
    if "$WASP" run --flush "$bad" -- true >/dev/null 2>"$TMP/bad.err"; then
        fail bad_flush "--flush '$bad' was accepted"
    elif ! grep -q "\[wasp\] ERROR bad flush '$bad'" "$TMP/bad.err"; then
        fail bad_flush "--flush '$bad': $(head -n 1 "$TMP/bad.err")"
    fi
done
[ "$failed" = 0 ] && ok bad_flush "0, 500ms, 2h, soon, 5, -1s and '' refused"

wait
echo "# programs done after $SECONDS s"

# --- judge -------------------------------------------------------------------

judge_partial native_kill 137 partial tid 0.6 15000
judge_partial native_segv 139 guarded tid 0.8 7000
judge_final native_exit
for v in $JAVA_CASES; do
    judge_partial "java_kill_$v" 137 partial thread 0.6 15000
    judge_final "java_exit_$v"
done
forks=$(sed -n 's/^flush_busy: \([0-9]*\) forks$/\1/p' "$TMP/fork_loop.out")
if [ "$(cat "$TMP/fork_loop.rc" 2>/dev/null)" != 0 ] || [ "${forks:-0}" -lt 5 ]; then
    fail fork_loop "exit $(cat "$TMP/fork_loop.rc" 2>/dev/null), ${forks:-no} forks: $(tail -n 1 "$TMP/fork_loop.err")"
elif ! "$WASP" report "$TMP/fork_loop" >/dev/null 2>"$TMP/fork_loop.rerr" || grep -q ERROR "$TMP/fork_loop.rerr"; then
    fail fork_loop "wasp report: $(grep -m1 ERROR "$TMP/fork_loop.rerr")"
else
    ok fork_loop "$forks children forked while checkpoints ran, each exited 0"
fi
if [ -e "$TMP/dir_gone" ]; then
    fail dir_gone "the removed run directory was made again: $(find "$TMP/dir_gone" | head -n 3 | tr '\n' ' ')"
elif ! grep -q "the run directory is gone" "$TMP/dir_gone.err"; then
    fail dir_gone "no warning that checkpoints stop: $(tail -n 1 "$TMP/dir_gone.err")"
elif ! grep -q "flush_busy: 2 threads" "$TMP/dir_gone.out"; then
    fail dir_gone "the program did not run to its end: $(tail -n 1 "$TMP/dir_gone.err")"
else
    ok dir_gone "checkpoints stopped, nothing made again, the program ran on"
fi
echo "# judged after $SECONDS s"
summary

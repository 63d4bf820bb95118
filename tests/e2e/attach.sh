#!/usr/bin/env bash
# tests/e2e/attach.sh - end-to-end tests of `wasp attach PID` (see
# docs/testing.md, "Attach tests").
#
# For each JDK: starts tests/e2e/java/AttachTarget.java without wasp, its
# two workers already running a planted silent-store loop, then
#   attach@V        wasp attach PID --duration 5s: exit 0, a profile that
#                   wasp report reads, stats.attached > 0, both workers
#                   profiled with samples > 0 and marked preexisting, the
#                   report header says "attached"; prints the attach latency
#   pair@V          (needs traps) the planted pair from those workers on top
#   busy@V          a second attach (--no-wait, new directory) starts; a third
#                   while it runs gets one ERROR line, non-zero exit
#   stop@V          wasp attach PID --stop ends the second (120 s) run early:
#                   exit 0, its manifest ends, the workers' profiles written;
#                   prints the time to stop; a second --stop: one ERROR line
#   unharmed@V      the program ends with its own exit status (7), stdout
#                   ("ready", "done") and stderr (empty but for the JDK 21+
#                   notice that an agent was loaded dynamically)
#   disabled@V      a JVM started with -XX:+DisableAttachMechanism: one
#                   ERROR line, non-zero exit, the JVM unharmed (no dump)
#   profiled@V      a JVM `wasp run` profiles since its start: one ERROR line,
#                   non-zero exit; that run still completes
#   other_user@V    root attaches to a JVM of user nobody (needs root)
#   namespace@V     a JVM in its own pid and mount namespaces, private /tmp
#                   (needs root)
# and once: bad pids (none, not a number, no such process), a process that
# is not a JVM, bad --duration values: one ERROR line each, non-zero exit.
# Prints "ok NAME" / "FAIL NAME: why" / "SKIP NAME: why", ends with
# "attach: N passed, M failed, K skipped". Assumes `make all`.
#
# Environment: WASP_JAVA_JDKS (JDK homes, default: OpenJDK 17 and Temurin
# 25 of this VM). Outputs stay in build/e2e/attach/.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRC=$ROOT/tests/e2e/java
OUT=$ROOT/build/e2e/attach
CLASSES=$OUT/classes
JDKS=${WASP_JAVA_JDKS:-/usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/temurin-25-jdk-amd64}
WORK_SECS=300   # the most the workers run: the test ends them (a file "finish")
ulimit -c 0

passed=0 failed=0 skipped=0
ok()   { echo "ok $1${2:+  # $2}"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
skip() { echo "SKIP $1: $2"; skipped=$((skipped + 1)); }
finish() {
    echo "attach: $passed passed, $failed failed, $skipped skipped"
    [ "$failed" = 0 ]
    exit $?
}

rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/lib" "$CLASSES"
# A snapshot of the build: a concurrent `make` cannot break a run.
if ! cp "$ROOT/build/bin/wasp" "$OUT/bin/wasp" 2>/dev/null || ! cp "$ROOT/build/lib/libwasp.so" "$OUT/lib/"; then
    fail build "no build/bin/wasp or build/lib/libwasp.so: run make first"
    finish
fi
WASP=$OUT/bin/wasp
if "$WASP" doctor --watch >/dev/null 2>&1; then
    TRAPS=1 NOWATCH=
else
    TRAPS=0 NOWATCH=--no-watch-check
fi
JAVAC=
for j in $JDKS; do [ -x "$j/bin/javac" ] && { JAVAC=$j/bin/javac; break; }; done
if [ -z "$JAVAC" ] || ! "$JAVAC" --release 17 -d "$CLASSES" "$SRC/AttachTarget.java" 2>"$OUT/javac.err"; then
    fail build "cannot compile AttachTarget.java with ${JAVAC:-no javac}: $(head -n 1 "$OUT/javac.err" 2>/dev/null)"
    finish
fi

# one_error NAME FILE RC: FILE has exactly one [wasp] ERROR line and RC != 0.
one_error() {
    local n
    n=$(grep -c '^\[wasp\] ERROR' "$2")
    if [ "$3" = 0 ]; then fail "$1" "exit status 0, expected an error"; return 1; fi
    if [ "$n" != 1 ]; then fail "$1" "$n [wasp] ERROR lines, expected 1: $(head -c 300 "$2")"; return 1; fi
    return 0
}

# start_target NAME JAVA-ARGS...: the JVM in the background, once it printed
# "ready"; sets TPID.
start_target() {
    local name=$1
    shift
    mkdir -p "$OUT/$name.d"
    (cd "$OUT/$name.d" && exec "$JDK/bin/java" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err") &
    TPID=$!
    for _ in $(seq 300); do
        grep -q ready "$OUT/$name.out" 2>/dev/null && return 0
        sleep 0.1
    done
    fail "$name" "the JVM never printed ready: $(head -c 300 "$OUT/$name.err")"
    kill "$TPID" 2>/dev/null
    return 1
}

# threads DIR: "name samples preexisting sampling_ms" per profile in DIR.
threads() {
    python3 - "$1" <<'PY'
import glob, sys
for path in sorted(glob.glob(sys.argv[1] + "/*/*.wasp")):
    name, stats = "?", {}
    for line in open(path, encoding="utf-8", errors="replace"):
        f = line.rstrip("\n").split("\t")
        if f[0] == "thread" and len(f) > 1: name = f[1]
        if f[0] == "stat" and len(f) == 3: stats[f[1]] = int(f[2])
    print(name, stats.get("samples", 0), stats.get("preexisting", 0), stats.get("sampling_ms", 0))
PY
}

# workers_sampled NAME DIR MAX_MS: both workers have a profile in DIR with
# samples > 0, marked preexisting, sampled for at most MAX_MS.
workers_sampled() {
    local t w line
    t=$(threads "$2")
    for w in worker-0 worker-1; do
        line=$(echo "$t" | grep "^$w ")
        if [ -z "$line" ]; then fail "$1" "no profile of $w in $2 (threads: $(echo "$t" | cut -d' ' -f1 | tr '\n' ' '))"; return 1; fi
        set -- "$1" "$2" "$3" $line
        if [ "$5" -le 0 ] || [ "$6" != 1 ] || [ "$7" -gt "$3" ]; then
            fail "$1" "$w: samples $5, preexisting $6, sampling_ms $7 (want > 0, 1, <= $3)"
            return 1
        fi
    done
    return 0
}

line_of() { grep -nE "// PLANT: $1\$" "$SRC/AttachTarget.java" | cut -d: -f1; }

case_jdk() {
    local a1=$OUT/a1@$V a2=$OUT/a2@$V rc json ms
    # Exact lines in code compiled before the attach need DebugNonSafepoints
    # (wasp attach says so where it is off: attach_elsewhere checks).
    start_target "target@$V" -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints -cp "$CLASSES" AttachTarget \
        "$WORK_SECS" || return
    local pid=$TPID

    timeout 120 "$WASP" attach "$pid" --duration 5s --interval 1ms $NOWATCH -o "$a1" >"$a1.log" 2>&1
    rc=$?
    ms=$(sed -nE 's/.*attached to JVM [0-9]+ in ([0-9]+) ms.*/\1/p' "$a1.log")
    if [ "$rc" != 0 ]; then
        fail "attach@$V" "exit $rc: $(grep -m1 ERROR "$a1.log")"
    elif ! timeout 120 "$WASP" report "$a1" --format json >"$a1.json" 2>"$a1.rerr" ||
         ! timeout 120 "$WASP" report "$a1" >"$a1.txt" 2>/dev/null; then
        fail "attach@$V" "wasp report failed: $(tail -n 1 "$a1.rerr")"
    elif ! python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["stats"].get("attached",0)>0 and d["stats"].get("preexisting",0)>0 else 1)' "$a1.json"; then
        fail "attach@$V" "stats.attached/preexisting missing from the report"
    elif ! grep -q '^  attached: ' "$a1.txt"; then
        fail "attach@$V" "the report header does not say attached"
    elif ! grep -q "wasp report $a1" "$a1.log"; then
        fail "attach@$V" "wasp attach did not print the report command"
    elif grep -q "DebugNonSafepoints" "$a1.log"; then
        fail "attach@$V" "wasp attach says DebugNonSafepoints is off in a JVM started with it"
    elif workers_sampled "attach@$V" "$a1" 6500; then
        ok "attach@$V" "attached in ${ms:-?} ms; $(threads "$a1" | grep '^worker' | awk '{printf "%s %s samples; ", $1, $2}')"
    fi

    if [ "$TRAPS" = 1 ]; then
        local l c f
        l=$(line_of attach-silent-store) c=$(line_of attach-update-call)
        f="AttachTarget.update:AttachTarget.java:$l;AttachTarget.work:AttachTarget.java:$c"
        if msg=$(python3 "$SRC/check_java.py" report "$a1.json" --rundir "$a1" --pair "$f" "$f"); then
            ok "pair@$V" "$msg"
        else
            fail "pair@$V" "$msg"
        fi
    else
        skip "pair@$V" "debug registers do not fire on this machine (wasp doctor --watch)"
    fi

    timeout 120 "$WASP" attach "$pid" --duration 120s --no-wait $NOWATCH -o "$a2" >"$a2.log" 2>&1
    rc=$?
    if [ "$rc" != 0 ] || [ "$a2" = "$a1" ]; then
        fail "busy@$V" "the second attach: exit $rc: $(grep -m1 ERROR "$a2.log")"
    else
        sleep 2
        timeout 120 "$WASP" attach "$pid" --duration 5s $NOWATCH -o "$OUT/a3@$V" >"$OUT/a3@$V.log" 2>&1
        rc=$?
        one_error "busy@$V" "$OUT/a3@$V.log" "$rc" && grep -q 'still active' "$OUT/a3@$V.log" &&
            ok "busy@$V" "second attach started; third refused: $(grep -m1 ERROR "$OUT/a3@$V.log" | cut -c1-80)..."
        timeout 120 "$WASP" attach "$pid" --stop >"$a2.stop" 2>&1
        rc=$?
        ms=$(sed -nE 's/.*ended the attached run in JVM [0-9]+ in ([0-9]+) ms.*/\1/p' "$a2.stop")
        if [ "$rc" != 0 ]; then
            fail "stop@$V" "--stop: exit $rc: $(head -n 1 "$a2.stop")"
        elif ! tail -n 1 "$a2/$pid/manifest" 2>/dev/null | grep -qx exit; then
            fail "stop@$V" "the stopped run's manifest does not end with exit"
        elif ! "$WASP" report "$a2" >/dev/null 2>&1; then
            fail "stop@$V" "wasp report cannot read the stopped run"
        elif workers_sampled "stop@$V" "$a2" 90000; then
            timeout 120 "$WASP" attach "$pid" --stop >"$a2.stop2" 2>&1
            rc=$?
            one_error "stop@$V" "$a2.stop2" "$rc" && ok "stop@$V" "stopped in ${ms:-?} ms"
        fi
    fi

    touch "$OUT/target@$V.d/finish"
    local deadline=$((SECONDS + 120))
    while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.5; done
    wait "$pid"
    rc=$?
    local err
    err=$(grep -v '^WARNING: \(A JVM TI agent has been loaded dynamically\|If a serviceability tool is\|Dynamic loading of agents will be disallowed\)' "$OUT/target@$V.err")
    if [ "$rc" != 7 ]; then
        fail "unharmed@$V" "exit status $rc, expected 7: $(tail -n 3 "$OUT/target@$V.err")"
    elif [ "$(cat "$OUT/target@$V.out")" != "$(printf 'ready\ndone')" ]; then
        fail "unharmed@$V" "stdout changed: $(head -c 200 "$OUT/target@$V.out")"
    elif [ -n "$err" ]; then
        fail "unharmed@$V" "stderr: $(echo "$err" | head -n 3)"
    elif ls "$OUT/target@$V.d"/hs_err_pid* >/dev/null 2>&1; then
        fail "unharmed@$V" "the JVM crashed"
    else
        ok "unharmed@$V" "exit 7, stdout and stderr as without wasp"
    fi

    start_target "disabled@$V" -XX:+DisableAttachMechanism -cp "$CLASSES" AttachTarget 300 || return
    pid=$TPID
    timeout 120 "$WASP" attach "$pid" --duration 1s $NOWATCH -o "$OUT/a4@$V" >"$OUT/a4@$V.log" 2>&1
    rc=$?
    touch "$OUT/disabled@$V.d/finish"
    wait "$pid"
    local jrc=$?
    if one_error "disabled@$V" "$OUT/a4@$V.log" "$rc"; then
        if [ "$jrc" != 7 ] || [ "$(cat "$OUT/disabled@$V.out")" != "$(printf 'ready\ndone')" ]; then
            fail "disabled@$V" "the JVM was harmed: exit $jrc, stdout $(head -c 100 "$OUT/disabled@$V.out")"
        else
            ok "disabled@$V" "$(grep ERROR "$OUT/a4@$V.log" | cut -c1-90)..."
        fi
    fi
}

# jvm_ready OUTFILE PGREP-ARGS...: the pid of the JVM pgrep finds (started
# under a wrapper: runuser, unshare, wasp run), once OUTFILE says ready.
jvm_ready() {
    local out=$1 pid= i
    shift
    for i in $(seq 300); do
        pid=$(pgrep "$@" | head -n 1)
        [ -n "$pid" ] && grep -q ready "$out" 2>/dev/null && break
        sleep 0.1
    done
    echo "$pid"
}

# profiled@V: a JVM that `wasp run` profiles since its start refuses an
# attach (one ERROR line, non-zero exit); its own run completes.
case_profiled() {
    local n=profiled@$V d=$OUT/profiled@$V.d pid rc
    mkdir -p "$d"
    (cd "$d" && exec "$WASP" run $NOWATCH -o "$OUT/run@$V" -- "$JDK/bin/java" -cp "$CLASSES" AttachTarget 300 \
        >"$OUT/$n.out" 2>"$OUT/$n.err") &
    local wrapper=$!
    pid=$(jvm_ready "$OUT/$n.out" -f "^$JDK/bin/java -cp $CLASSES AttachTarget 300")
    timeout 120 "$WASP" attach "$pid" --duration 1s $NOWATCH -o "$OUT/a5@$V" >"$OUT/a5@$V.log" 2>&1
    rc=$?
    touch "$d/finish"
    wait "$wrapper"
    local wrc=$?
    if one_error "$n" "$OUT/a5@$V.log" "$rc"; then
        if [ "$wrc" != 7 ] || ! "$WASP" report "$OUT/run@$V" >/dev/null 2>&1; then
            fail "$n" "the wasp run of it was harmed: exit $wrc, or its profile unreadable"
        else
            ok "$n" "$(grep ERROR "$OUT/a5@$V.log" | cut -c1-90)..."
        fi
    fi
}

# attach_elsewhere NAME PID VIEWDIR FINISH WRAPPER: a 2 s attach to PID
# whose profile lands in VIEWDIR (our view of it), both workers sampled;
# then the JVM, told by the file FINISH, ends: WRAPPER (our child that
# started it: runuser, unshare) passes on its status 7.
attach_elsewhere() {
    local name=$1 pid=$2 dir=$3 finish=$4 wrapper=$5 rc
    timeout 120 "$WASP" attach "$pid" --duration 2s --interval 1ms $NOWATCH >"$OUT/$name.log" 2>&1
    rc=$?
    if [ "$rc" != 0 ]; then
        fail "$name" "exit $rc: $(grep -m1 ERROR "$OUT/$name.log")"
    elif ! grep -q "wasp report $dir" "$OUT/$name.log"; then
        fail "$name" "the profile is not where expected ($dir): $(grep -m1 'profile in' "$OUT/$name.log")"
    elif ! grep -q "INFO no -XX:+DebugNonSafepoints" "$OUT/$name.log"; then
        fail "$name" "wasp attach did not say that lines in code compiled before it are coarse"
    elif workers_sampled "$name" "$dir" 3500 && "$WASP" report "$dir" >/dev/null 2>&1; then
        touch "$finish"
        wait "$wrapper"
        rc=$?
        [ "$rc" = 7 ] && ok "$name" "$(grep -o 'attached to JVM.*' "$OUT/$name.log" | cut -c1-100)" ||
            fail "$name" "the JVM ended with $rc, expected 7"
        return
    fi
    touch "$finish"
    wait "$wrapper"
}

# other_user@V: root attaches to a JVM of user nobody (the socket and the
# files are made with nobody's ids); -o in a directory nobody can write.
case_other_user() {
    local n=other_user@$V d=/tmp/wasp-attach-test-$$
    if [ "$(id -u)" != 0 ]; then fail "$n" "needs root (run the suite as root)"; return; fi
    rm -rf "$d" && mkdir -p "$d" && cp "$CLASSES/AttachTarget.class" "$d/" && chmod 777 "$d"
    (cd "$d" && exec runuser -u nobody -- "$JDK/bin/java" -cp "$d" AttachTarget 300 >"$d/out" 2>"$OUT/$n.err") &
    local wrapper=$! pid
    pid=$(jvm_ready "$d/out" -u nobody -f "AttachTarget 300")
    cd "$d" && attach_elsewhere "$n" "$pid" "$d/wasp-attach-$pid-1" "$d/finish" "$wrapper"
    cd "$ROOT" && rm -rf "$d"
}

# namespace@V: a JVM in its own pid and mount namespaces with a private
# /tmp (a container): its socket, the library copy and the profile are
# reached through /proc/PID/root; the pid inside is 1.
case_namespace() {
    local n=namespace@$V pid
    if [ "$(id -u)" != 0 ]; then fail "$n" "needs root (run the suite as root)"; return; fi
    # The class is opened before the private /tmp hides it: the checkout
    # itself may live under /tmp.
    unshare --mount --pid --fork --mount-proc --propagation private sh -c \
        'exec 3<"$1" && mount -t tmpfs tmpfs /tmp && mkdir /tmp/app && cat <&3 >/tmp/app/AttachTarget.class &&
         exec 3<&- && cd /tmp/app && exec "$2" -cp /tmp/app AttachTarget 301' sh "$CLASSES/AttachTarget.class" "$JDK/bin/java" \
        >"$OUT/$n.out" 2>"$OUT/$n.err" &
    local outer=$!
    pid=$(jvm_ready "$OUT/$n.out" -f "^$JDK/bin/java -cp /tmp/app AttachTarget 301")
    if [ -z "$pid" ]; then fail "$n" "the JVM did not start in its namespaces: $(head -c 200 "$OUT/$n.err")"; return; fi
    attach_elsewhere "$n" "$pid" "/proc/$pid/root/tmp/wasp-attach-$pid-1" "/proc/$pid/root/tmp/app/finish" "$outer"
}

# error NAME ARGS...: wasp attach ARGS gives one ERROR line, non-zero exit.
error() {
    local name=$1 rc
    shift
    timeout 60 "$WASP" attach "$@" >"$OUT/$name.log" 2>&1
    rc=$?
    one_error "$name" "$OUT/$name.log" "$rc" && ok "$name" "exit $rc: $(grep ERROR "$OUT/$name.log" | cut -c1-80)..."
}

for JDK in $JDKS; do
    V=$("$JDK/bin/java" -XshowSettings:properties -version 2>&1 | sed -nE 's/.*java.specification.version = ([0-9]+).*/\1/p')
    V=${V:-$(basename "$JDK")}
    case_jdk
    case_profiled
    case_other_user
    case_namespace
done

true & gone=$!
wait $gone
sleep 300 & sleeper=$!
error no_pid
error bad_pid notapid
error no_such_pid "$gone"
error not_a_jvm "$sleeper"
kill $sleeper 2>/dev/null
error bad_duration_unit 1 --duration 30
error bad_duration_zero 1 --duration 0s
error bad_duration_long 1 --duration 8d
error bad_option 1 --mode nonsense
finish

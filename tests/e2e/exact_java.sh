#!/usr/bin/env bash
# tests/e2e/exact_java.sh - the exact mode on Java programs (see
# docs/testing.md, "Exact mode on Java"). Needs no debug register: it runs,
# and must pass, on every machine with Valgrind and a JDK.
#
# Runs the planted Java programs of tests/e2e/java/ (and the bias programs
# of Bias.java) under `wasp run --exact` and checks with check_java.py that
# each analytic fraction comes out within 1 point with the planted pair
# (method and line, caller below) first. Each program runs a fixed number of
# rounds (-Dwasp.rounds, Budget.java): enough that the JVM's start-up and the
# JIT's warm-up, which the exact mode sees too, move no fraction by more than
# half a point. -Xbatch -XX:-TieredCompilation keeps the warm-up short: one
# compiled version, compiled while the program waits (under Valgrind, tiered
# warm-up code profiling into MDOs is most of a short run). Then
# --exact-limit on a JVM, a JVM started by a script, `wasp diff` between a
# Java and a native exact run, and the agent option's error outside the
# exact mode.
#
# Environment: WASP_EXACT_JDKS (JDK homes, default OpenJDK 17 and Temurin 25
# where installed), WASP_EXACT_ROUNDS_SCALE (multiplies every case's rounds,
# default 1), WASP_E2E_KEEP=1 keeps the temporary directory.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRC=$ROOT/tests/e2e/java
WASP=$ROOT/build/bin/wasp
LIB=$ROOT/build/lib/libwasp.so
CHECK=$SRC/check_java.py
JDKS=${WASP_EXACT_JDKS:-/usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/temurin-25-jdk-amd64}
SCALE=${WASP_EXACT_ROUNDS_SCALE:-1}
TIMEOUT=600
TOL=0.01
JFLAGS="-Xbatch -XX:-TieredCompilation"
ulimit -c 0

TMP=$(mktemp -d "${TMPDIR:-/tmp}/wasp-exact-java.XXXXXX") || exit 2
if [ "${WASP_E2E_KEEP:-0}" = 1 ]; then echo "# keeping $TMP"; else trap 'rm -rf "$TMP"' EXIT; fi

. "$ROOT/tests/e2e/exact_lib.sh"
finish() {
    echo "exact_java: $passed passed, $failed failed"
    [ "$failed" = 0 ]
    exit $?
}

if ! command -v valgrind >/dev/null; then
    fail valgrind "valgrind is not installed (make installs the Debian package)"
    finish
fi
JAVAC=
for j in $JDKS; do
    if [ -x "$j/bin/javac" ]; then JAVAC=$j/bin/javac; break; fi
done
if [ -z "$JAVAC" ]; then
    fail build "no javac in any of: $JDKS"
    finish
fi
CLASSES=$TMP/classes
if ! "$JAVAC" --release 17 -d "$CLASSES" "$SRC"/*.java 2>"$TMP/javac.err"; then
    fail build "javac failed: $(head -n 1 "$TMP/javac.err")"
    finish
fi

line() { grep -nE "// PLANT: $2\$" "$SRC/$1" | cut -d: -f1; }
rounds() { echo $(( ($1 * ${SCALE%.*}) > 0 ? $1 * ${SCALE%.*} : 1 )); }

# jexact NAME MODE [WASP-FLAGS...] -- "${JAVA[@]}" JAVA-ARGS...: exact
# (exact_lib.sh) in $TMP/NAME.d, so that a JVM's hs_err file lands there.
jexact() {
    local rc
    mkdir -p "$TMP/$1.d"
    cd "$TMP/$1.d" || return 1
    exact "$@"
    rc=$?
    cd "$TMP" || return 1
    return $rc
}

# verdict NAME EXPECTED CHECK-ARGS...: the program fraction within TOL of
# EXPECTED ("-": not checked), and the check_java.py assertions (--top 1:
# the planted pair first).
verdict() {
    local name=$1 want=$2 msg range=()
    shift 2
    [ "$want" = - ] || range=(--fraction "$(python3 -c "print($want - $TOL)")" "$(python3 -c "print($want + $TOL)")")
    if msg=$(python3 "$CHECK" report "$TMP/$name.json" --rundir "$TMP/$name" --top 1 "${range[@]}" "$@"); then
        ok "$name" "$msg"
    else
        fail "$name" "$msg"
    fi
}

# --- planted programs ----------------------------------------------------------

planted_silent_store() {
    local l c f
    l=$(line SilentStore.java silent-store) c=$(line SilentStore.java update-call)
    f="SilentStore.update:SilentStore.java:$l;SilentStore.main:SilentStore.java:$c"
    jexact "silent_store@$V" silent-store -- "${JAVA[@]}" -Dwasp.rounds="$(rounds 400)" SilentStore &&
        verdict "silent_store@$V" 0.75 --pair "$f" "$f" --site "$f" 0.74 0.76
}

planted() {
    local l c f
    planted_silent_store

    # Silent-load: a JVM's start-up loads ~70 MB, most of it silent, which
    # only thousands of rounds would dilute below a point: the site fraction
    # is checked (the program fraction is printed).
    l=$(line SilentLoad.java silent-load) c=$(line SilentLoad.java search-call)
    f="SilentLoad.search:SilentLoad.java:$l;SilentLoad.main:SilentLoad.java:$c"
    jexact "silent_load_half@$V" silent-load -- "${JAVA[@]}" -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,SilentLoad::mutate \
        -Dwasp.rounds="$(rounds 100)" SilentLoad half &&
        verdict "silent_load_half@$V" - --pair "$f" "$f" --site "$f" 0.49 0.51
    jexact "silent_load_const@$V" silent-load -- "${JAVA[@]}" -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,SilentLoad::mutate \
        -Dwasp.rounds="$(rounds 100)" SilentLoad const &&
        verdict "silent_load_const@$V" - --pair "$f" "$f" --site "$f" 0.99 1

    local fill read call
    call=$(line DeadFill.java fill-call) read=$(line DeadFill.java fill-read)
    fill=$(python3 "$CHECK" jdkline "$JDK/bin/javap" java.util.Arrays "void fill(int[], int)" iastore)
    f="java.util.Arrays.fill:Arrays.java:$fill;DeadFill.round:DeadFill.java:$call"
    jexact "dead_fill@$V" dead-store -- "${JAVA[@]}" -Dwasp.rounds="$(rounds 300)" DeadFill &&
        verdict "dead_fill@$V" 0.50 --pair "$f" "$f" --site "$f" 0.49 0.51 \
            --exists "$f" "DeadFill.consume:DeadFill.java:$read;DeadFill.round:DeadFill.java"

    l=$(line Threads.java threads) c=$(line Threads.java threads-call)
    f="Threads.update:Threads.java:$l;Threads\$Worker.run:Threads.java:$c"
    jexact "threads@$V" silent-store -- "${JAVA[@]}" -Dwasp.rounds="$(rounds 500)" Threads &&
        verdict "threads@$V" 0.75 --pair "$f" "$f" --merged --min-threads 4 --site "$f" 0.74 0.76
}

# The bias programs (Bias.java): waste and useful work on different instructions.
bias() {
    local which=$1 method=$2 want=$3 n=$4 l c f
    l=$(line Bias.java "bias-$which") c=$(line Bias.java "call-$which")
    f="Bias.$method:Bias.java:$l;Bias.main:Bias.java:$c"
    jexact "bias_$which@$V" silent-store -- "${JAVA[@]}" -Dwasp.rounds="$(rounds "$n")" Bias "$which" &&
        verdict "bias_$which@$V" "$want" --pair "$f" "$f"
}

# Every case on the first JDK; on the others (a JVM under Valgrind costs
# minutes of CPU per case) the silent-store case and one bias program.
first=1
for JDK in $JDKS; do
    [ -x "$JDK/bin/java" ] || continue
    JAVA=("$JDK/bin/java" $JFLAGS -cp "$CLASSES")
    V=$(basename "$JDK" | sed -E 's/^(java|temurin)-([0-9]+).*/\2/')
    if [ $first = 1 ]; then
        planted
        bias two-stores twoStores 0.50 150
        bias fp-mul fpMul 0.50 100
        bias odd-even oddEven 0.50 250
        bias ratio ratio 0.75 800
    else
        planted_silent_store
        bias two-stores twoStores 0.50 150
    fi
    first=0
done
JDK=$(echo $JDKS | cut -d' ' -f1)
JAVA=("$JDK/bin/java" $JFLAGS -cp "$CLASSES")
V=$(basename "$JDK" | sed -E 's/^(java|temurin)-([0-9]+).*/\2/')

# --- the rest: on the first JDK ----------------------------------------------------

# --exact-limit cuts a JVM (the agent's poller names its frames first):
# exit 0, the run marked cut, the planted pair named.
case_limit() {
    local l c f n
    l=$(line Bias.java bias-two-stores) c=$(line Bias.java call-two-stores)
    f="Bias.twoStores:Bias.java:$l;Bias.main:Bias.java:$c"
    jexact java_limit silent-store --exact-limit 300m -- "${JAVA[@]}" Bias two-stores 1000 || return
    n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["stats"].get("exact_cut", 0))' "$TMP/java_limit.json")
    if [ "$n" != 1 ]; then
        fail java_limit "stats.exact_cut is $n, expected 1"
    elif ! grep -q '^\[wasp\] INFO --exact-limit 300m stopped' "$TMP/java_limit.err"; then
        fail java_limit "wasp run did not say the run was cut: $(last_line "$TMP/java_limit.err")"
    else
        msg=$(python3 "$CHECK" report "$TMP/java_limit.json" --top 1 --pair "$f" "$f") &&
            ok java_limit "$msg" || fail java_limit "$msg"
    fi
}
case_limit

# Code that adds no Java frame (the VM's C++, stubs, libc) is one context per
# Java caller, not one per instruction: silent_load_half's run names ~0.77 M
# contexts that way on JDK 17 (1.92 M when each VM instruction was one), so a
# 1.2 M-context table holds them all and the planted pair stays first.
case_contexts() {
    local l c f
    l=$(line SilentLoad.java silent-load) c=$(line SilentLoad.java search-call)
    f="SilentLoad.search:SilentLoad.java:$l;SilentLoad.main:SilentLoad.java:$c"
    VALGRIND_OPTS=--wasp-max-contexts=1200000 jexact java_contexts silent-load -- "${JAVA[@]}" \
        -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,SilentLoad::mutate \
        -Dwasp.rounds="$(rounds 100)" SilentLoad half &&
        verdict java_contexts - --pair "$f" "$f" --stat-max drop.table_full 0
}
case_contexts

# A JVM that a script starts is a JVM too (the tool tells by the program).
case_script() {
    local l c f
    l=$(line Bias.java bias-two-stores) c=$(line Bias.java call-two-stores)
    f="Bias.twoStores:Bias.java:$l;Bias.main:Bias.java:$c"
    rm -rf "$TMP/java_script"
    if ! timeout $TIMEOUT "$WASP" run --exact --mode silent-store -o "$TMP/java_script" -- sh -c \
        "\"$JDK/bin/java\" $JFLAGS -Dwasp.rounds=20 -cp \"$CLASSES\" Bias two-stores" >"$TMP/java_script.out" 2>"$TMP/java_script.err" ||
       ! "$WASP" report "$TMP/java_script" --format json >"$TMP/java_script.json" 2>"$TMP/java_script.rerr"; then
        fail java_script "run or report failed: $(grep -m1 -F '[wasp]' "$TMP/java_script.err" "$TMP/java_script.rerr")"
        return
    fi
    msg=$(python3 "$CHECK" report "$TMP/java_script.json" --top 1 --pair "$f" "$f") &&
        ok java_script "$msg" || fail java_script "$msg"
}
case_script

# wasp diff between a Java exact run and a native one: no pair in common
# but the folded small pairs.
case_diff() {
    local bin=$TMP/silent_store msg
    gcc -O1 -g -o "$bin" "$ROOT/tests/e2e/silent_store.c" 2>"$TMP/gcc.err" || { fail java_diff "gcc: $(head -n 1 "$TMP/gcc.err")"; return; }
    timeout $TIMEOUT "$WASP" run --exact --mode silent-store -o "$TMP/native" -- "$bin" 0.003 >/dev/null 2>&1 ||
        { fail java_diff "the native exact run failed"; return; }
    [ -d "$TMP/silent_store@$V" ] || { fail java_diff "no Java run to compare"; return; }
    if ! "$WASP" diff "$TMP/silent_store@$V" "$TMP/native" --format json >"$TMP/java_diff.json" 2>"$TMP/java_diff.err"; then
        fail java_diff "wasp diff failed: $(last_line "$TMP/java_diff.err")"
        return
    fi
    msg=$(python3 - "$TMP/java_diff.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
sides = {p["in"] for p in d["pairs"]}
# Only the folded small pairs ("[pairs below ...]") may match across a JVM and a C program.
both = [p["watch"]["frames"][0]["function"] for p in d["pairs"] if p["in"] == "both"]
ok = d["a"]["sampler"] == "exact" == d["b"]["sampler"] and all(f.startswith("[pairs below") for f in both) \
     and {"a", "b"} <= sides and abs(d["fraction_delta"] - (d["b"]["fraction"] - d["a"]["fraction"])) < 1e-12
print("java %.4f vs native %.4f, %d pairs, sides %s" % (d["a"]["fraction"], d["b"]["fraction"], d["pairs_total"], sorted(sides)))
sys.exit(0 if ok else 1)
PY
    ) && ok java_diff "$msg" || fail java_diff "$msg"
}
case_diff

# The maps-only agent option outside `wasp run --exact`: one clear error, and
# the JVM runs on.
case_agent_alone() {
    "$JDK/bin/java" -agentpath:"$LIB"=exact-maps -cp "$CLASSES" Hello >"$TMP/alone.out" 2>"$TMP/alone.err"
    local rc=$? n
    n=$(grep -c '^\[wasp\] ERROR the exact-maps agent option is for `wasp run --exact` only' "$TMP/alone.err")
    if [ $rc != 0 ] || [ "$n" != 1 ]; then
        fail agent_alone "exit $rc, $n matching error lines: $(last_line "$TMP/alone.err")"
    else
        ok agent_alone "$(grep -m1 '^\[wasp\] ERROR' "$TMP/alone.err" | cut -c1-90)"
    fi
}
case_agent_alone

finish

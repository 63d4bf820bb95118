#!/usr/bin/env bash
# tests/e2e/exact.sh - end-to-end tests of the exact mode (`wasp run --exact`)
# and of `wasp diff` (see docs/testing.md). Needs no debug register and no
# PMU: it runs, and must pass, on every machine with Valgrind.
#
# Builds the planted programs of tests/e2e/ as tests/e2e/run does, profiles
# each with every access watched, and checks with check.py that each analytic
# fraction comes out within 1 point with the planted pair first. Then the
# exact mode's errors, --exact-limit, and `wasp diff`.
#
# Environment: WASP_EXACT_SCALE (work multiplier, default 0.003: ~2-6 M
# accesses per program, a second or two each under Valgrind),
# WASP_E2E_KEEP=1 keeps the temporary directory.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRC=$ROOT/tests/e2e
BIN=$ROOT/build/e2e
WASP=$ROOT/build/bin/wasp
CHECK=$SRC/check.py
SCALE=${WASP_EXACT_SCALE:-0.003}
E2E_CFLAGS="-O1 -g -fno-tree-vectorize -fno-inline -pthread"   # as tests/e2e/run
TIMEOUT=60
TOL=0.01   # the exact mode sees every access: only start-up code and the first round differ

TMP=$(mktemp -d "${TMPDIR:-/tmp}/wasp-exact.XXXXXX") || exit 2
if [ "${WASP_E2E_KEEP:-0}" = 1 ]; then echo "# keeping $TMP"; else trap 'rm -rf "$TMP"' EXIT; fi

passed=0
failed=0
ok()   { echo "ok $1${2:+  # $2}"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
last_line() { tail -n 1 "$1" 2>/dev/null | tr -d '\n'; }

if ! command -v valgrind >/dev/null; then
    fail valgrind "valgrind is not installed (make installs the Debian package)"
    echo "exact: $passed passed, $failed failed"
    exit 1
fi

mkdir -p "$BIN"
for p in silent_store dead_store silent_load fp_approx threads fork_child stack_array; do
    gcc $E2E_CFLAGS -o "$BIN/$p" "$SRC/$p.c" 2>"$TMP/build-$p.err" ||
        fail "build-$p" "$(head -n 1 "$TMP/build-$p.err")"
done

line() { grep -nF "/* PLANT: $2 */" "$SRC/$1" | cut -d: -f1; }

# exact CASE MODE [FLAGS...] -- CMD...: wasp run --exact into $TMP/CASE and
# its JSON report into $TMP/CASE.json.
exact() {
    local name=$1 mode=$2 flags=() rc
    shift 2
    while [ "$1" != -- ]; do flags+=("$1"); shift; done
    shift
    rm -rf "${TMP:?}/$name"
    timeout $TIMEOUT "$WASP" run --exact --mode "$mode" "${flags[@]}" -o "$TMP/$name" -- "$@" \
        >"$TMP/$name.out" 2>"$TMP/$name.err"
    rc=$?
    if [ $rc != 0 ]; then
        fail "$name" "wasp run --exact exited $rc: $(grep -m1 -F '[wasp]' "$TMP/$name.err" || last_line "$TMP/$name.err")"
        return 1
    fi
    if ! "$WASP" report "$TMP/$name" --format json >"$TMP/$name.json" 2>"$TMP/$name.rerr"; then
        fail "$name" "wasp report failed: $(last_line "$TMP/$name.rerr")"
        return 1
    fi
}

verdict() {
    local name=$1 msg
    shift
    if msg=$(python3 "$CHECK" "$TMP/$name.json" --rundir "$TMP/$name" --sampler exact --tol $TOL "$@"); then
        ok "$name" "$msg"
    else
        fail "$name" "$msg"
    fi
}

# --- planted programs ----------------------------------------------------------

l=$(line silent_store.c silent-store)
exact exact_silent_store silent-store -- "$BIN/silent_store" "$SCALE" &&
    verdict exact_silent_store --pair "kernel:silent_store.c:$l" "kernel:silent_store.c:$l" --first --expect 0.50

w=$(line dead_store.c dead-store) r=$(line dead_store.c dead-store-read)
exact exact_dead_store dead-store -- "$BIN/dead_store" "$SCALE" &&
    verdict exact_dead_store --pair "fill:dead_store.c:$w" "fill:dead_store.c:$w" --first \
        --exists "fill:dead_store.c:$w" "sum:dead_store.c:$r" --expect 0.75

l=$(line silent_load.c silent-load)
exact exact_silent_load silent-load -- "$BIN/silent_load" "$SCALE" &&
    verdict exact_silent_load --pair "search:silent_load.c:$l" "search:silent_load.c:$l" --first --expect 0.50

l=$(line fp_approx.c fp-approx)
exact exact_fp_approx silent-store -- "$BIN/fp_approx" "$SCALE" &&
    verdict exact_fp_approx --pair "update:fp_approx.c:$l" "update:fp_approx.c:$l" --first \
        --field approx_fraction --expect 0.50 --expect-fraction 0

l=$(line threads.c threads)
exact exact_threads silent-store -- "$BIN/threads" "$SCALE" &&
    verdict exact_threads --pair "kernel:threads.c:$l" "kernel:threads.c:$l" --first --expect 0.50 \
        --min-threads 4 --merged

# A child exec'd by the program is followed (--trace-children) into its own process directory.
p=$(line fork_child.c fork-parent) c=$(line silent_store.c silent-store)
exact exact_fork_child silent-store -- "$BIN/fork_child" "$BIN/silent_store" "$SCALE" &&
    verdict exact_fork_child --pair "parent_kernel:fork_child.c:$p" "parent_kernel:fork_child.c:$p" \
        --pair "kernel:silent_store.c:$c" "kernel:silent_store.c:$c" --expect 0.50 --processes 2

s=$(line stack_array.c stack-store) h=$(line stack_array.c heap-store)
exact exact_stack_exclude silent-store --stack exclude -- "$BIN/stack_array" "$SCALE" &&
    verdict exact_stack_exclude --pair "heap_kernel:stack_array.c:$h" "heap_kernel:stack_array.c:$h" --first \
        --absent "stack_kernel:stack_array.c:$s" "stack_kernel:stack_array.c:$s" --min-drop stack 100 --expect 0.50

# --exact-limit: a run of ~1.8 G stores stopped after 20 M instructions, and the report says so.
case_limit() {
    local n
    exact exact_limit silent-store --exact-limit 20m -- "$BIN/silent_store" 1 || return
    n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["stats"].get("exact_cut", 0))' "$TMP/exact_limit.json")
    if [ "$n" != 1 ]; then
        fail exact_limit "stats.exact_cut is $n, expected 1"
    elif ! grep -q '^\[wasp\] INFO --exact-limit 20m stopped' "$TMP/exact_limit.err"; then
        fail exact_limit "wasp run did not say the run was cut: $(last_line "$TMP/exact_limit.err")"
    elif ! "$WASP" report "$TMP/exact_limit" | grep -q 'exact-limit stopped the program after'; then
        fail exact_limit "the text report does not say the run was cut"
    else
        verdict exact_limit --pair "kernel:silent_store.c:$c" "kernel:silent_store.c:$c" --first --expect 0.50
    fi
}
case_limit

# --- errors: one [wasp] ERROR line, non-zero exit ------------------------------

expect_one_error() {
    local name=$1 rc n
    shift
    timeout $TIMEOUT "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" </dev/null
    rc=$?
    n=$(grep -c '^\[wasp\] ERROR' "$TMP/$name.err")
    if [ $rc = 0 ]; then
        fail "$name" "exited 0, expected an error"
    elif [ "$n" != 1 ]; then
        fail "$name" "$n '[wasp] ERROR' lines, expected 1 ($(last_line "$TMP/$name.err"))"
    else
        ok "$name" "exit $rc: $(grep -m1 '^\[wasp\] ERROR' "$TMP/$name.err" | cut -c1-90)"
    fi
}

expect_one_error exact_with_sampler "$WASP" run --exact --sampler software -o "$TMP/e1" -- "$BIN/silent_store" 0.001
expect_one_error exact_with_interval "$WASP" run --exact --interval 1ms -o "$TMP/e2" -- "$BIN/silent_store" 0.001
expect_one_error exact_bad_limit "$WASP" run --exact --exact-limit lots -o "$TMP/e3" -- "$BIN/silent_store" 0.001
expect_one_error exact_zero_limit "$WASP" run --exact --exact-limit 0 -o "$TMP/e4" -- "$BIN/silent_store" 0.001
expect_one_error exact_limit_alone "$WASP" run --exact-limit 5s -o "$TMP/e5" -- "$BIN/silent_store" 0.001
expect_one_error exact_java "$WASP" run --exact -o "$TMP/e6" -- java -version

echo "exact: $passed passed, $failed failed"
[ "$failed" = 0 ]

# tests/e2e/exact_lib.sh - shared by exact.sh and exact_java.sh (sourced):
# the pass/fail counters and one exact run with its report. Needs WASP,
# TMP and TIMEOUT set.

passed=0
failed=0
ok()   { echo "ok $1${2:+  # $2}"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
last_line() { tail -n 1 "$1" 2>/dev/null | tr -d '\n'; }

# exact CASE MODE [FLAGS...] -- CMD...: wasp run --exact, in the current
# directory, into $TMP/CASE and its JSON report into $TMP/CASE.json. A JVM
# that crashed (an hs_err file here) fails the case.
exact() {
    local name=$1 mode=$2 flags=() rc
    shift 2
    while [ "$1" != -- ]; do flags+=("$1"); shift; done
    shift
    rm -rf "${TMP:?}/$name"
    timeout $TIMEOUT "$WASP" run --exact --mode "$mode" "${flags[@]}" -o "$TMP/$name" -- "$@" \
        >"$TMP/$name.out" 2>"$TMP/$name.err"
    rc=$?
    if ls hs_err_pid* >/dev/null 2>&1; then
        fail "$name" "the JVM crashed: $PWD/$(ls hs_err_pid* | head -n 1)"
        return 1
    fi
    if [ $rc != 0 ]; then
        fail "$name" "wasp run --exact exited $rc: $(grep -m1 -F '[wasp]' "$TMP/$name.err" || last_line "$TMP/$name.err")"
        return 1
    fi
    if ! "$WASP" report "$TMP/$name" --format json >"$TMP/$name.json" 2>"$TMP/$name.rerr"; then
        fail "$name" "wasp report failed: $(last_line "$TMP/$name.rerr")"
        return 1
    fi
}

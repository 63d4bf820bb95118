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
cd "$TMP" || exit 2
if [ "${WASP_E2E_KEEP:-0}" = 1 ]; then echo "# keeping $TMP"; else trap 'rm -rf "$TMP"' EXIT; fi

. "$SRC/exact_lib.sh"

if ! command -v valgrind >/dev/null; then
    fail valgrind "valgrind is not installed (make installs the Debian package)"
    echo "exact: $passed passed, $failed failed"
    exit 1
fi

mkdir -p "$BIN"
for p in silent_store dead_store silent_load fp_approx threads fork_child fork_noexec stack_array diff_fix exact_fields io_buffer unload inline_callers; do
    gcc $E2E_CFLAGS -o "$BIN/$p" "$SRC/$p.c" 2>"$TMP/build-$p.err" ||
        fail "build-$p" "$(head -n 1 "$TMP/build-$p.err")"
done
gcc $E2E_CFLAGS -DFIXED -o "$BIN/diff_fix_fixed" "$SRC/diff_fix.c" 2>"$TMP/build-fixed.err" ||
    fail build-diff_fix_fixed "$(head -n 1 "$TMP/build-fixed.err")"

line() { grep -nF "/* PLANT: $2 */" "$SRC/$1" | cut -d: -f1; }

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

l=$(line silent_store.c silent-store) l0=$l
exact exact_silent_store silent-store -- "$BIN/silent_store" "$SCALE" &&
    verdict exact_silent_store --pair "kernel:silent_store.c:$l" "kernel:silent_store.c:$l" --first --expect 0.50

w=$(line dead_store.c dead-store) r=$(line dead_store.c dead-store-read)
exact exact_dead_store dead-store -- "$BIN/dead_store" "$SCALE" &&
    verdict exact_dead_store --pair "fill:dead_store.c:$w" "fill:dead_store.c:$w" --first \
        --exists "fill:dead_store.c:$w" "sum:dead_store.c:$r" --expect 0.75

# A buffer written to a file three rounds of four: the kernel reads it, so
# only the fourth round's stores are dead (25%); unseen reads made it 100%.
f=$(line io_buffer.c io-fill)
exact exact_io_buffer dead-store -- "$BIN/io_buffer" "$SCALE" &&
    verdict exact_io_buffer --pair "fill:io_buffer.c:$f" "fill:io_buffer.c:$f" --first --expect 0.25

# A store in a function inlined into one inlined into main: three
# functions name its code, each at its line (the sampled mode names them
# alike: tests/e2e/run inline_callers).
s=$(line inline_callers.c inlined-store) f=$(line inline_callers.c fill-call) m=$(line inline_callers.c main-call)
exact exact_inline_callers silent-store -- "$BIN/inline_callers" 0 &&
    verdict exact_inline_callers --pair "set_cell:inline_callers.c:$s" "set_cell:inline_callers.c:$s" --first \
        --callers "fill:inline_callers.c:$f,main:inline_callers.c:$m" --expect 1.0

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

# A statically linked program, which LD_PRELOAD (the sampled mode) cannot enter: Valgrind can.
if gcc $E2E_CFLAGS -static -o "$BIN/silent_store_static" "$SRC/silent_store.c" 2>"$TMP/build-static.err"; then
    exact exact_static silent-store -- "$BIN/silent_store_static" "$SCALE" &&
        verdict exact_static --pair "kernel:silent_store.c:$l0" "kernel:silent_store.c:$l0" --first --expect 0.50
else
    fail exact_static "cannot link statically: $(head -n 1 "$TMP/build-static.err")"
fi

# A forked child without exec, ending with _exit: its own profile, holding only what it did after the fork.
n=$(line fork_noexec.c fork-noexec)
exact exact_fork_noexec silent-store -- "$BIN/fork_noexec" _exit "$SCALE" &&
    verdict exact_fork_noexec --pair "child_kernel:fork_noexec.c:$n" "child_kernel:fork_noexec.c:$n" --first \
        --expect 0.50 --processes 2

s=$(line stack_array.c stack-store) h=$(line stack_array.c heap-store)
exact exact_stack_exclude silent-store --stack exclude -- "$BIN/stack_array" "$SCALE" &&
    verdict exact_stack_exclude --pair "heap_kernel:stack_array.c:$h" "heap_kernel:stack_array.c:$h" --first \
        --absent "stack_kernel:stack_array.c:$s" "stack_kernel:stack_array.c:$s" --min-drop stack 100 --expect 0.50

# A library's code, run, unloaded, its addresses taken by another library:
# named as it was (Valgrind's debug-info epoch at capture, --keep-debuginfo),
# not after the other library (100% read other_work before).
if gcc $E2E_CFLAGS -shared -fPIC -o "$BIN/unload_plugin.so" "$SRC/unload_plugin.c" 2>"$TMP/build-plugin.err" &&
    gcc $E2E_CFLAGS -shared -fPIC -DOTHER -o "$BIN/unload_other.so" "$SRC/unload_plugin.c" 2>>"$TMP/build-plugin.err"; then
    u=$(line unload_plugin.c unload-store)
    exact exact_unload dead-store -- "$BIN/unload" "$BIN" 2 &&
        verdict exact_unload --pair "plugin_work:unload_plugin.c:$u" "plugin_work:unload_plugin.c:$u" --first \
            --expect 1.0 --tol 0.01
else
    fail exact_unload "cannot build its libraries: $(head -n 1 "$TMP/build-plugin.err")"
fi

# Two 4-byte fields in one 8-byte granule, stored by two instructions: never paired with each other.
fa=$(line exact_fields.c field-a) fb=$(line exact_fields.c field-b)
exact exact_fields silent-store -- "$BIN/exact_fields" "$SCALE" &&
    verdict exact_fields --pair "kernel:exact_fields.c:$fa" "kernel:exact_fields.c:$fa" --first --expect 0.50 \
        --exists "kernel:exact_fields.c:$fb" "kernel:exact_fields.c:$fb" \
        --absent "kernel:exact_fields.c:$fa" "kernel:exact_fields.c:$fb" \
        --absent "kernel:exact_fields.c:$fb" "kernel:exact_fields.c:$fa"

# More calling contexts than the tool's table holds (lowered to 40 here; a
# JVM's start-up makes millions): the rest pair as before, under one pair
# that says it is not named, never under a real context's name, and the
# fraction is unchanged.
case_table_full() {
    local unnamed="[pairs past the exact mode's context table, not named]::0"
    VALGRIND_OPTS=--wasp-max-contexts=40 exact exact_table_full silent-store -- "$BIN/silent_store" "$SCALE" ||
        return
    local text n
    text=$("$WASP" report "$TMP/exact_table_full")
    if ! grep -q "calling contexts past the exact mode's table" <<<"$text"; then
        fail exact_table_full "the text report does not say that contexts went unnamed"
        return
    fi
    # The contexts it did name: the table's 40 but the id kept unused.
    n=$(sed -nE 's/^  accesses: .*, ([0-9]+) calling contexts$/\1/p' <<<"$text")
    if [ "$n" != 39 ]; then
        fail exact_table_full "the text report names ${n:-no} calling contexts, expected the table's 39"
        return
    fi
    verdict exact_table_full --pair "$unnamed" "$unnamed" --first --min-drop table_full 1000 --expect 0.50
}
case_table_full

# --exact-limit: a 4-thread run of ~5.7 G stores stopped after 20 M
# instructions (from inside any thread), and the report says so once.
case_limit() {
    local n t
    t=$(line threads.c threads)
    exact exact_limit silent-store --exact-limit 20m -- "$BIN/threads" 1 || return
    n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["stats"].get("exact_cut", 0))' "$TMP/exact_limit.json")
    if [ "$n" != 1 ]; then
        fail exact_limit "stats.exact_cut is $n, expected 1"
    elif ! grep -q '^\[wasp\] INFO --exact-limit 20m stopped' "$TMP/exact_limit.err"; then
        fail exact_limit "wasp run did not say the run was cut: $(last_line "$TMP/exact_limit.err")"
    elif ! "$WASP" report "$TMP/exact_limit" | grep -q 'exact-limit stopped the program after'; then
        fail exact_limit "the text report does not say the run was cut"
    else
        verdict exact_limit --pair "kernel:threads.c:$t" "kernel:threads.c:$t" --first --expect 0.50
    fi
}
case_limit

# The HTML page of the cut run, rendered by a browser: the exact summary and the cut note.
case_html() {
    local dom
    [ -d "$TMP/exact_limit" ] || return
    . "$ROOT/tests/e2e/install_missing.sh"
    if ! install_missing chromium:chromium; then
        fail exact_html "no chromium, and apt-get could not install it"
        return
    fi
    "$WASP" report "$TMP/exact_limit" -o "$TMP/exact_limit.html" 2>"$TMP/exact_html.err" ||
        { fail exact_html "wasp report -o html failed: $(last_line "$TMP/exact_html.err")"; return; }
    dom=$(timeout $TIMEOUT chromium --headless --no-sandbox --disable-gpu --dump-dom "file://$TMP/exact_limit.html" 2>/dev/null)
    if ! grep -q 'pairs (every access watched)' <<<"$dom"; then
        fail exact_html "the rendered page has no exact summary row"
    elif ! grep -q 'exact-limit stopped the program after' <<<"$dom"; then
        fail exact_html "the rendered page does not say the run was cut"
    elif grep -q '<dt>sampling error</dt>' <<<"$dom"; then
        fail exact_html "the rendered page shows a sampling error for an exact run"
    else
        ok exact_html "summary and cut note rendered"
    fi
}
case_html

# --- errors: one [wasp] ERROR line, non-zero exit ------------------------------

# ERROR_NAMES=WORD: the error line must also hold WORD.
expect_one_error() {
    local name=$1 rc n
    shift
    # -k: a program stopped under Valgrind (LeakSanitizer's ptrace) ignores TERM
    timeout -k 5 $TIMEOUT "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" </dev/null
    rc=$?
    n=$(grep -c '^\[wasp\] ERROR' "$TMP/$name.err")
    if [ $rc = 0 ]; then
        fail "$name" "exited 0, expected an error"
    elif [ "$n" != 1 ]; then
        fail "$name" "$n '[wasp] ERROR' lines, expected 1 ($(last_line "$TMP/$name.err"))"
    elif [ -n "${ERROR_NAMES:-}" ] && ! grep -q "^\[wasp\] ERROR .*$ERROR_NAMES" "$TMP/$name.err"; then
        fail "$name" "the error does not name $ERROR_NAMES: $(grep -m1 '^\[wasp\] ERROR' "$TMP/$name.err")"
    else
        ok "$name" "exit $rc: $(grep -m1 '^\[wasp\] ERROR' "$TMP/$name.err" | cut -c1-90)"
    fi
}

expect_one_error exact_with_sampler "$WASP" run --exact --sampler software -o "$TMP/e1" -- "$BIN/silent_store" 0.001
expect_one_error exact_with_interval "$WASP" run --exact --interval 1ms -o "$TMP/e2" -- "$BIN/silent_store" 0.001
expect_one_error exact_bad_limit "$WASP" run --exact --exact-limit lots -o "$TMP/e3" -- "$BIN/silent_store" 0.001
expect_one_error exact_zero_limit "$WASP" run --exact --exact-limit 0 -o "$TMP/e4" -- "$BIN/silent_store" 0.001
expect_one_error exact_limit_alone "$WASP" run --exact-limit 5s -o "$TMP/e5" -- "$BIN/silent_store" 0.001

# -o as the sampled mode checks it: a directory holding an earlier run (its
# raw records were converted again with the new ones), a symbolic link
# (written through), each refused before the program runs; the directories
# it makes are private (they were 0755; profiles hold command lines).
rm -f "$TMP/ran"
ERROR_NAMES="holds an earlier run" expect_one_error exact_out_again \
    "$WASP" run --exact -o "$TMP/exact_silent_store" -- touch "$TMP/ran"
[ -e "$TMP/ran" ] && fail exact_out_again "the program ran although -o was refused"
mkdir -p "$TMP/link_target" && ln -sfn "$TMP/link_target" "$TMP/out_link"
ERROR_NAMES="symbolic link" expect_one_error exact_out_link \
    "$WASP" run --exact -o "$TMP/out_link" -- touch "$TMP/ran"
[ -n "$(ls -A "$TMP/link_target")" ] && fail exact_out_link "wrote through the link: $(ls "$TMP/link_target")"
modes=$(find "$TMP/exact_silent_store" -type d -exec stat -c %a {} + | sort -u | tr '\n' ' ')
if [ "$modes" = "700 " ]; then ok exact_dir_private "run and process directories 0700"
else fail exact_dir_private "directory modes: $modes"; fi

# Sanitizers that cannot run under Valgrind are refused up front, by name:
# an ASan program died at its shadow memory's mapping, an LSan one hung in
# its leak check at exit (ptrace under Valgrind).
for san in address:AddressSanitizer leak:LeakSanitizer; do
    kind=${san%%:*}
    if ! gcc $E2E_CFLAGS -fsanitize="$kind" -o "$BIN/silent_store_$kind" "$SRC/silent_store.c" 2>"$TMP/build-$kind.err"; then
        fail "exact_sanitize_$kind" "gcc -fsanitize=$kind failed: $(head -n 1 "$TMP/build-$kind.err")"
        continue
    fi
    ERROR_NAMES=${san#*:} expect_one_error "exact_sanitize_$kind" \
        "$WASP" run --exact -o "$TMP/san-$kind" -- "$BIN/silent_store_$kind" 0.001
done

# --- wasp diff -------------------------------------------------------------------

# diff_json CASE A B [ARGS]: wasp diff A B --format json into $TMP/CASE.json.
diff_json() {
    local name=$1
    shift
    if ! "$WASP" diff "$@" --format json >"$TMP/$name.json" 2>"$TMP/$name.err"; then
        fail "$name" "wasp diff failed: $(last_line "$TMP/$name.err")"
        return 1
    fi
}

# A run against itself: every pair in both, every delta 0.
if [ -s "$TMP/exact_silent_store.json" ] && diff_json diff_self "$TMP/exact_silent_store" "$TMP/exact_silent_store"; then
    msg=$(python3 - "$TMP/diff_self.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
bad = [p for p in d["pairs"] if p["delta"] != 0 or p["in"] != "both"]
if d["fraction_delta"] != 0 or bad or not d["pairs"] or len(d["pairs"]) != d["pairs_total"]:
    print("fraction_delta %r, %d of %d pairs with a change or one-sided" % (d["fraction_delta"], len(bad), len(d["pairs"])))
    sys.exit(1)
print("%d pairs, all unchanged, fraction %.4f in both" % (len(d["pairs"]), d["a"]["fraction"]))
PY
    ) && ok diff_self "$msg" || fail diff_self "$msg"
fi

# Before and after the fix: the planted pair only in A, 50 points less.
b=$(line diff_fix.c diff-before)
if exact diff_before silent-store -- "$BIN/diff_fix" "$SCALE" &&
   exact diff_after silent-store -- "$BIN/diff_fix_fixed" "$SCALE" &&
   diff_json diff_fix "$TMP/diff_before" "$TMP/diff_after"; then
    msg=$(python3 - "$TMP/diff_fix.json" "$b" <<'PY'
import json, sys
d, line = json.load(open(sys.argv[1])), int(sys.argv[2])
top = d["pairs"][0]
leaf = lambda side: (top[side]["frames"][0]["function"], top[side]["frames"][0]["line"])
problems = []
if leaf("watch") != ("update", line) or leaf("trap") != ("update", line):
    problems.append("first pair is %s -> %s, not update:%d" % (leaf("watch"), leaf("trap"), line))
if top["in"] != "a" or abs(top["a_share"] - 0.5) > 0.01 or abs(top["delta"] + 0.5) > 0.01:
    problems.append("first pair in %s, a_share %.4f, delta %.4f (want a, 0.50, -0.50)" % (top["in"], top["a_share"], top["delta"]))
if abs(d["fraction_delta"] + 0.5) > 0.01 or d["b"]["fraction"] > 0.01:
    problems.append("fraction_delta %.4f, after %.4f (want -0.50, 0)" % (d["fraction_delta"], d["b"]["fraction"]))
print("; ".join(problems) or "planted pair only before: a_share %.4f, delta %.4f; program %.4f -> %.4f" %
      (top["a_share"], top["delta"], d["a"]["fraction"], d["b"]["fraction"]))
sys.exit(1 if problems else 0)
PY
    ) && ok diff_fix "$msg" || fail diff_fix "$msg"
    if "$WASP" diff "$TMP/diff_before" "$TMP/diff_after" -o "$TMP/diff.html" 2>"$TMP/diff_html.err" &&
       grep -q '<h1>wasp diff: silent-store</h1>' "$TMP/diff.html" && grep -q "diff_fix.c:$b" "$TMP/diff.html"; then
        ok diff_html "one page naming diff_fix.c:$b"
    else
        fail diff_html "no HTML diff naming diff_fix.c:$b ($(last_line "$TMP/diff_html.err"))"
    fi
    "$WASP" diff "$TMP/diff_before" "$TMP/diff_after" >"$TMP/diff_text.out" 2>&1 &&
        grep -q "update (diff_fix.c:$b)" "$TMP/diff_text.out" && ok diff_text ||
        fail diff_text "text diff does not name update (diff_fix.c:$b): $(head -n 3 "$TMP/diff_text.out")"
fi

# Runs of different processes (a fork+exec run against a one-process run):
# the child's kernel pair matches the single process's.
if [ -s "$TMP/exact_fork_child.json" ] && diff_json diff_processes "$TMP/exact_silent_store" "$TMP/exact_fork_child"; then
    msg=$(python3 - "$TMP/diff_processes.json" "$c" <<'PY'
import json, sys
d, line = json.load(open(sys.argv[1])), int(sys.argv[2])
hit = [p for p in d["pairs"] if p["watch"]["frames"][0]["function"] == "kernel" and p["watch"]["frames"][0]["line"] == line
       and p["trap"]["frames"][0]["line"] == line]
if len(hit) != 1 or hit[0]["in"] != "both" or not hit[0]["a_share"] > 0.4 or not hit[0]["b_share"] > 0.05:
    print("kernel pair: %r" % [(p["in"], p["a_share"], p["b_share"]) for p in hit])
    sys.exit(1)
print("kernel pair in both: %.3f -> %.3f (the child is one of 2 processes)" % (hit[0]["a_share"], hit[0]["b_share"]))
PY
    ) && ok diff_processes "$msg" || fail diff_processes "$msg"
fi

# A sampled run against an exact one: on a machine whose watchpoints never
# fire the sampled run (with --no-watch-check, which wasp run then needs)
# has samples and no pairs: then every pair is marked "b"; where they fire,
# the planted pair is in both.
rm -rf "$TMP/sampled"
NOWATCH=$("$WASP" doctor --watch >/dev/null 2>&1 || echo --no-watch-check)
if timeout $TIMEOUT "$WASP" run $NOWATCH --budget off --interval 1ms -o "$TMP/sampled" -- "$BIN/silent_store" 0.05 >/dev/null 2>"$TMP/sampled.err"; then
    if diff_json diff_sampled "$TMP/sampled" "$TMP/exact_silent_store"; then
        msg=$(python3 - "$TMP/diff_sampled.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ok = d["a"]["sampler"] in ("software", "pmu") and d["b"]["sampler"] == "exact" and d["pairs_total"] >= d["b"]["pairs"] \
     and abs(d["fraction_delta"] - (d["b"]["fraction"] - d["a"]["fraction"])) < 1e-12
print("%s %.3f vs exact %.3f, %d pairs, %d in both" % (d["a"]["sampler"], d["a"]["fraction"], d["b"]["fraction"],
      d["pairs_total"], sum(p["in"] == "both" for p in d["pairs"])))
sys.exit(0 if ok else 1)
PY
        ) && ok diff_sampled "$msg" || fail diff_sampled "$msg"
    fi
else
    fail diff_sampled "the sampled run failed: $(grep -m1 '^\[wasp\] ERROR' "$TMP/sampled.err")"
fi

expect_one_error diff_one_run "$WASP" diff "$TMP/exact_silent_store"
expect_one_error diff_bad_format "$WASP" diff "$TMP/exact_silent_store" "$TMP/exact_silent_store" --format xml
expect_one_error diff_missing_run "$WASP" diff "$TMP/exact_silent_store" "$TMP/no/such/run"
expect_one_error diff_modes "$WASP" diff "$TMP/exact_silent_store" "$TMP/exact_dead_store"

echo "exact: $passed passed, $failed failed"
[ "$failed" = 0 ]

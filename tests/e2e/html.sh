#!/bin/sh
# tests/e2e/html.sh - the HTML report and collapsed stacks of a real run.
#
# Profiles tests/e2e/html_case.c (a planted silent store between fill_row
# and reset_row) with `wasp run`, writes `wasp report -o report.html`,
# `.json` and `.collapsed`, checks the collapsed stacks' syntax and totals,
# then opens the page in headless Chromium through the DevTools protocol
# (tests/e2e/html/check.py): the top pair's functions on the page, selecting
# a pair, sorting, graph search and zoom, a hostile name rendered as text,
# the disassembly hook, and no console error or network request. A
# profile with a JIT code blob, written here as the JVM front end would,
# checks the disassembly wasp itself writes.
#
# Installs what it needs on Debian 12 (gcc, make, python3, chromium) and
# builds wasp. Prints "ok html" or "FAIL html: reason"; exits 0 or 1.
# WASP_HTML_KEEP=1 keeps the temporary directory.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WASP=$ROOT/build/bin/wasp

fail() { echo "FAIL html: $*"; exit 1; }

. "$ROOT/tests/e2e/install_missing.sh"
install_missing gcc:gcc make:make python3:python3 chromium:chromium ||
    fail "could not install$MISSING with apt-get"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/wasp-html.XXXXXX") || fail "mktemp failed"
if [ "${WASP_HTML_KEEP:-0}" = 1 ]; then echo "# keeping $TMP"; else trap 'rm -rf "$TMP"' EXIT; fi

make -C "$ROOT" all >"$TMP/make.log" 2>&1 ||
    fail "make failed: $(grep -m 1 -E 'error|Error' "$TMP/make.log" || tail -n 1 "$TMP/make.log")"
gcc -O1 -g -fno-tree-vectorize -fno-inline -o "$TMP/html_case" "$ROOT/tests/e2e/html_case.c" \
    2>"$TMP/cc.log" || fail "gcc failed: $(head -n 1 "$TMP/cc.log")"
# The page is checked on a real run's pairs: sampled where watchpoints
# trap, else from the exact mode (the report is the same format).
SAMPLER="--budget off --interval 1ms"
if ! "$WASP" doctor --watch >/dev/null 2>&1; then
    SAMPLER=--exact
    echo "# watchpoints do not fire here: the page is checked on an exact-mode run"
fi
# shellcheck disable=SC2086 # SAMPLER: flags, split on purpose
timeout 300 "$WASP" run $SAMPLER --mode silent-store -o "$TMP/prof" -- "$TMP/html_case" \
    >"$TMP/run.log" 2>&1 || fail "wasp run failed: $(tail -n 1 "$TMP/run.log")"
for ext in html json collapsed; do
    "$WASP" report "$TMP/prof" -o "$TMP/report.$ext" 2>"$TMP/report.log" ||
        fail "wasp report -o report.$ext failed: $(tail -n 1 "$TMP/report.log")"
done

# Collapsed stacks: "root;...;leaf COUNT" lines summing to all wasteful bytes.
msg=$(python3 - "$TMP/report.collapsed" "$TMP/report.json" <<'PY'
import json, re, sys
lines = open(sys.argv[1]).read().splitlines()
report = json.load(open(sys.argv[2]))
t = report["totals"]
total = 0
for l in lines:
    m = re.fullmatch(r"([^;\s][^;]*(?:;[^;]+)*) (\d+)", l)
    if not m:
        sys.exit("bad collapsed line %r" % l)
    total += int(m.group(2))
if total != t["wasteful_bytes"] + t["approx_bytes"]:
    sys.exit("collapsed stacks sum to %d, the report to %d" % (total, t["wasteful_bytes"] + t["approx_bytes"]))
if not any(";fill_row (" in l for l in lines) or not any(";reset_row (" in l for l in lines):
    sys.exit("fill_row or reset_row missing from the collapsed stacks")
if not lines[0].startswith("_start"):
    sys.exit("stacks are not root first: %r" % lines[0])
print("%d stacks" % len(lines))
PY
) || fail "$msg"

# A JIT-compiled method, 2500 bytes of nops then push/mov/mov/add/mov/pop/ret,
# whose two movs are a pair (docs/profile-format.md, "Code").
mkdir -p "$TMP/jit/1" && python3 - "$TMP/jit/1/1-0.wasp" <<'PY' || fail "could not write the JIT profile"
import sys, zlib
code = bytes([0x90] * 2500) + bytes.fromhex("554889e5488946104883c001488946185dc3")
base = 0x7f0000001000
recs = ["wasp-profile\t2", "mode\tsilent-store", "sampler\tsoftware", "pid\t1", "tid\t1",
        "thread\tmain", "command\tjava Demo", "interval\t1000000", "fp_tolerance\t0.01",
        "watch_check\tfires 4/4",
        "stat\tsamples\t10", "stat\ttraps\t4", "stat\tunplaced\t3",
        "frame\t0\tDemo.kernel\tDemo.java\t11\t\t0x%x\tmov %%rax, 0x10(%%rsi)" % (base + 2504),
        "frame\t1\tDemo.kernel\tDemo.java\t12\t\t0x%x\tmov %%rax, 0x18(%%rsi)" % (base + 2512),
        "frame\t2\tDemo.main\tDemo.java\t3\t\t0x7f0000009000\t",
        "ctx\t0\t0,2", "ctx\t1\t1,2", "pair\t0\t1\t4\t64\t64\t0",
        "code\t0\tDemo.kernel\t0x%x\t%s" % (base, code.hex()),
        "codeline\t0\t0\t9\tDemo.kernel\tDemo.java", "codeline\t0\t2500\t10\tDemo.kernel\tDemo.java",
        "codeline\t0\t2504\t11\tDemo.kernel\tDemo.java", "codeline\t0\t2508\t40\tDemo.<init>\tBump.java",
        "codeline\t0\t2512\t12\tDemo.kernel\tDemo.java"]
body = "".join(r + "\n" for r in recs).encode()
open(sys.argv[1], "wb").write(body + b"end\t%d\t%08x\n" % (len(recs), zlib.crc32(body)))
PY
"$WASP" report "$TMP/jit" -o "$TMP/jit.html" 2>"$TMP/report.log" ||
    fail "wasp report of the JIT profile failed: $(tail -n 1 "$TMP/report.log")"

out=$(timeout 100 python3 "$ROOT/tests/e2e/html/check.py" "$TMP/report.html" "$TMP/report.json" \
      "$TMP/jit.html" 2>&1)
rc=$?
[ $rc = 124 ] && fail "the browser check timed out"
[ $rc = 0 ] || fail "$(echo "$out" | tail -n 1)"
# A real JVM: a planted Java program profiled through the agent; the page
# must show its methods and the disassembly of the JIT-compiled code.
JAVA_HOME=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")}
mkdir -p "$TMP/java" && "$JAVA_HOME/bin/javac" -d "$TMP/java" "$ROOT/tests/e2e/java/SilentStore.java" \
    "$ROOT/tests/e2e/java/Budget.java" 2>"$TMP/javac.log" || fail "javac failed: $(head -n 1 "$TMP/javac.log")"
# Under the exact mode a few hundred rounds, with C2 compiling at once
# (as tests/e2e/exact_java.sh): a JVM under Valgrind costs a minute or two.
JFLAGS=
[ "$SAMPLER" = --exact ] && JFLAGS="-Xbatch -XX:-TieredCompilation -Dwasp.rounds=300"
# shellcheck disable=SC2086 # SAMPLER, JFLAGS: flags, split on purpose
timeout 600 "$WASP" run $SAMPLER --mode silent-store -o "$TMP/jprof" -- \
    "$JAVA_HOME/bin/java" $JFLAGS -cp "$TMP/java" SilentStore >"$TMP/jrun.log" 2>&1 ||
    fail "wasp run java failed: $(tail -n 1 "$TMP/jrun.log")"
for ext in html json; do
    "$WASP" report "$TMP/jprof" -o "$TMP/java.$ext" 2>"$TMP/report.log" ||
        fail "wasp report of the Java run failed: $(tail -n 1 "$TMP/report.log")"
done
jout=$(timeout 100 python3 "$ROOT/tests/e2e/html/check.py" --java "$TMP/java.html" "$TMP/java.json" 2>&1)
rc=$?
[ $rc = 124 ] && fail "the browser check of the Java report timed out"
[ $rc = 0 ] || fail "$(echo "$jout" | tail -n 1)"
echo "ok html  # $out; $jout; $msg; $(wc -c <"$TMP/report.html") bytes"

#!/bin/sh
# tests/e2e/pprof.sh - `wasp report -o FILE.pb.gz` read back by go tool pprof.
#
# Writes the profiles of a planted native run and a planted Java run with
# tests/e2e/pprof_gen.c (through the engine's profile_write, because real
# runs have no pairs where watchpoints never fire; the right answers are in
# that file), writes them as pprof with `wasp report`, and reads them with
# `go tool pprof`: -top must list the trap leaves by wasteful bytes with the
# right totals and the program fractions as comments, -sample_index the
# monitored bytes, -raw every sample's stack (C2 leaf first, the relation
# frame, C1) and labels. A real `wasp run` gives one sample per pair of its
# JSON report. Then the errors: an unwritable -o and binary output to a
# terminal each give one [wasp] ERROR line and a non-zero exit.
#
# Installs what it needs on Debian 12 (gcc, python3, golang-go) and builds
# wasp. Prints "ok NAME" or "FAIL NAME: reason" per case and ends with
# "pprof: N passed, M failed". WASP_PPROF_KEEP=1 keeps the temporary directory.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WASP=$ROOT/build/bin/wasp
passed=0
failed=0
ok()   { echo "ok $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
finish() { echo "pprof: $passed passed, $failed failed"; [ "$failed" = 0 ]; exit $?; }

missing=""
for need in gcc:gcc python3:python3 go:golang-go script:bsdutils; do
    command -v "${need%%:*}" >/dev/null 2>&1 || missing="$missing ${need#*:}"
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
    { $SUDO apt-get update -qq &&
      $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing; } \
        >/dev/null 2>&1 || { fail setup "could not install$missing with apt-get"; finish; }
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/wasp-pprof.XXXXXX") || { fail setup "mktemp failed"; finish; }
if [ "${WASP_PPROF_KEEP:-0}" = 1 ]; then echo "# keeping $TMP"; else trap 'rm -rf "$TMP"' EXIT; fi
# pprof keeps fetched profiles under $HOME/pprof unless told otherwise.
export PPROF_TMPDIR="$TMP/pprof-home" HOME="${HOME:-$TMP}"

make -C "$ROOT" all >"$TMP/make.log" 2>&1 ||
    { fail setup "make failed: $(tail -n 1 "$TMP/make.log")"; finish; }
gcc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I"$ROOT/src/engine" -o "$TMP/pprof_gen" \
    "$ROOT/tests/e2e/pprof_gen.c" "$ROOT/build/obj/src/engine/profile_write.o" \
    "$ROOT/build/obj/src/engine/publish.o" -lz \
    2>"$TMP/cc.log" || { fail setup "gcc failed: $(head -n 1 "$TMP/cc.log")"; finish; }
"$TMP/pprof_gen" "$TMP/runs" || { fail setup "pprof_gen failed"; finish; }

# The two ways to ask for pprof: by extension and by --format.
"$WASP" report "$TMP/runs/native" -o "$TMP/native.pb.gz" 2>"$TMP/native.err" ||
    fail report_native "wasp report failed: $(tail -n 1 "$TMP/native.err")"
"$WASP" report "$TMP/runs/java" --format pprof -o "$TMP/java.out" 2>"$TMP/java.err" ||
    fail report_java "wasp report failed: $(tail -n 1 "$TMP/java.err")"

# pprof_check NAME FILE MODE: go tool pprof's -top, -sample_index and -raw
# of FILE against the answers pprof_gen planted for MODE's run.
pprof_check() {
    for view in "-top" "-top -sample_index=monitored_bytes" "-raw"; do
        out=$TMP/$1$(echo "$view" | tr -d ' =_-').txt
        # shellcheck disable=SC2086
        go tool pprof $view "$2" >"$out" 2>"$TMP/$1.pprof.err" ||
            { fail "$1" "go tool pprof $view failed: $(head -n 1 "$TMP/$1.pprof.err")"; return; }
    done
    msg=$(python3 - "$3" "$TMP/$1top.txt" "$TMP/$1topsampleindexmonitoredbytes.txt" \
                    "$TMP/$1raw.txt" <<'PY'
import re, sys
mode, top, mon, raw = sys.argv[1], *[open(p).read() for p in sys.argv[2:]]
want = {
    "silent-store": dict(
        flat=[("reset_row", 600), ("copy_tile", 300), ("checksum", 100)], total=1000,
        monitored=2000, relation="rewritten silently by",
        comment="program (Eq. 1): 50.00% precisely silent, 2.00% approximately silent",
        stack=["reset_row", "render", "main", "__libc_start_call_main", "rewritten silently by",
               "fill_row", "render", "main", "__libc_start_call_main"],
        labels=["mode:[silent-store]", "trap_instruction:[movl $0x0, (%rdx)]",
                "watch_instruction:[movl %eax, (%rdx)]", "approx_bytes:[0 bytes]", "traps:[20]"]),
    "dead-store": dict(
        flat=[("DeadFill.clear", 700), ("java.util.Arrays.fill", 200)], total=900,
        monitored=1000, relation="killed by",
        comment="program (Eq. 1): 90.00% dead of 1000 bytes monitored",
        stack=["java.util.Arrays.fill", "DeadFill.reset", "DeadFill.main", "killed by",
               "DeadFill.fill", "DeadFill.main"],
        labels=["mode:[dead-store]", "trap_instruction:[mov %edx, 0x10(%rdi,%rax,4)]",
                "watch_instruction:[mov %r10d, 0x10(%rsi,%rbx,4)]", "traps:[4]"]),
}[mode]

def rows(text):
    # "      600B 60.00% 60.00%       600B 60.00%  reset_row"
    out = []
    for line in text.splitlines():
        m = re.match(r"\s*(\d+)B?\s+[\d.]+%\s+[\d.]+%\s+(\d+)B?\s+[\d.]+%\s+(.+?)\s*$", line)
        if m: out.append((m.group(3), int(m.group(1)), int(m.group(2))))
    return out

def fail(why):
    print(why)
    sys.exit(1)

if "Type: wasteful_bytes" not in top: fail("-top does not show wasteful_bytes by default")
if want["comment"] not in top: fail("-top lacks the comment '%s'" % want["comment"])
if "of %dB total" % want["total"] not in top: fail("-top total is not %dB" % want["total"])
flat = [(n, f) for n, f, c in rows(top) if f > 0]
if flat != want["flat"]: fail("-top flat %s, want %s" % (flat, want["flat"]))
cum = {n: c for n, f, c in rows(top)}
if cum.get(want["relation"]) != want["total"]:
    fail("relation frame '%s' carries %s, want all %d" % (want["relation"], cum.get(want["relation"]), want["total"]))
if "of %dB total" % want["monitored"] not in mon: fail("monitored_bytes total is not %dB" % want["monitored"])

# -raw: "Locations" maps ids to names; each sample is "  V1  V2: id id ..." then labels.
names = dict(re.findall(r"^\s+(\d+): 0x0 (?:M=\d+ )?(.+?) \S*:\d+ s=\d+$", raw, re.M))
stacks = re.findall(r"^\s+\d+\s+\d+: ([\d ]+)\n((?:\s{16}.*\n)+)", raw, re.M)
if not names or not stacks: fail("cannot read -raw output: %r" % raw[:300])
for ids, labels in stacks:
    frames = [names.get(i, "?") for i in ids.split()]
    if frames == want["stack"]:
        missing = [l for l in want["labels"] if l not in labels]
        if missing: fail("sample %s lacks labels %s" % (frames, missing))
        break
else:
    fail("no sample with stack %s in -raw" % want["stack"])
PY
)
    if [ $? = 0 ]; then ok "$1"; else fail "$1" "$msg"; fi
}

[ -s "$TMP/native.pb.gz" ] && pprof_check pprof_native "$TMP/native.pb.gz" silent-store
[ -s "$TMP/java.out" ] && pprof_check pprof_java "$TMP/java.out" dead-store

# A real run (pairs only where watchpoints trap; --no-watch-check where they
# never do): the pprof holds one sample per pair of the JSON report.
NOWATCH=--no-watch-check
"$WASP" doctor --watch >/dev/null 2>&1 && NOWATCH=
timeout 120 "$WASP" run $NOWATCH --budget off --interval 1ms -o "$TMP/real" -- \
    sh -c 'i=0; while [ $i -lt 50000 ]; do i=$((i+1)); done' >"$TMP/real.log" 2>&1
"$WASP" report "$TMP/real" -o "$TMP/real.pb.gz" 2>>"$TMP/real.log" &&
    "$WASP" report "$TMP/real" -o "$TMP/real.json" 2>>"$TMP/real.log" &&
    go tool pprof -raw "$TMP/real.pb.gz" >"$TMP/real.raw" 2>>"$TMP/real.log"
rc=$?
pairs=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pairs_total"])' \
        "$TMP/real.json" 2>/dev/null)
samples=$(grep -cE '^ +[0-9]+ +[0-9]+: [0-9 ]+$' "$TMP/real.raw" 2>/dev/null)
if [ "$rc" = 0 ] && [ -n "$pairs" ] && [ "$samples" = "$pairs" ] &&
   grep -q '^Comment: program (Eq. 1): ' "$TMP/real.raw"; then
    ok pprof_real_run
else
    fail pprof_real_run "rc $rc, $pairs pairs, $samples samples: $(tail -n 1 "$TMP/real.log")"
fi

# An unwritable -o: one ERROR line, non-zero exit, no file.
"$WASP" report "$TMP/runs/native" -o "$TMP/no/such/dir/w.pb.gz" >"$TMP/bad.out" 2>"$TMP/bad.err"
rc=$?
if [ "$rc" != 0 ] && [ "$(wc -l <"$TMP/bad.err")" = 1 ] && grep -q '^\[wasp\] ERROR ' "$TMP/bad.err" &&
   [ ! -e "$TMP/no" ]; then
    ok pprof_unwritable
else
    fail pprof_unwritable "exit $rc, stderr: $(head -c 300 "$TMP/bad.err")"
fi

# Compressed bytes to a terminal: refused (script gives wasp a terminal).
script -qec "'$WASP' report '$TMP/runs/native' --format pprof; echo rc=\$?" /dev/null \
    >"$TMP/tty.out" 2>&1
if grep -q '^\[wasp\] ERROR pprof output is binary' "$TMP/tty.out" && grep -q 'rc=2' "$TMP/tty.out" &&
   [ "$(grep -c . "$TMP/tty.out")" = 2 ]; then
    ok pprof_terminal
else
    fail pprof_terminal "$(head -c 300 "$TMP/tty.out" | tr -d '\r')"
fi
finish

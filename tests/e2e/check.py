#!/usr/bin/env python3
"""check.py - assertions on one `wasp report --format json` for the e2e suite.

usage: check.py REPORT.json [options]

  --pair WATCH TRAP      a planted pair that must be among the top --top pairs
                         (by fraction plus approx_fraction, with --first by
                         --field); WATCH and
                         TRAP are leaf frames written FUNCTION:FILE:LINE
                         (FILE compared by base name). Repeatable.
  --exists WATCH TRAP    a pair that must be somewhere in the report.
  --absent WATCH TRAP    a pair that must not be anywhere in the report.
  --insn-pair PREFIX TRAP  a pair among the top --top whose watch leaf
                         instruction starts with PREFIX (e.g. "rep stos": a
                         libc frame has no file or line) and whose trap leaf
                         is TRAP, with a non-zero fraction.
  --callers F,F,...      the first --pair's watch and trap contexts must go on,
                         after their leaf frames, with these frames (each
                         FUNCTION:FILE:LINE): the functions that inlined the
                         leaf's, each at the line of its call.
  --min-drop NAME N      the report's drops.NAME must be at least N.
  --min-stat NAME N      the report's stats.NAME must be at least N.
  --top N                how far down --pair may be (default 3)
  --first                the first --pair must be the report's largest pair by
                         --field (fraction, or approx_fraction), not just in the
                         top; --pair then ranks by --field too
  --sampler NAME         the report's sampler must be NAME (e.g. exact)
  --field F              totals field compared with --expect (default fraction)
  --expect X             analytic value of --field, 0..1
  --expect-fraction X    analytic value of totals.fraction (a second check,
                         e.g. 0 for the approximate-FP case)
  --tol T                allowed absolute error (default 0.05 = 5 points)
  --processes N          the report must merge exactly N processes
  --min-threads N        the report must merge at least N threads
  --rundir DIR           the run directory the report was made from (named
                         in failure messages; needed by --merged)
  --merged               the first --pair must appear exactly once in the
                         report, with a count equal to the sum of its counts
                         in the raw per-thread profiles under --rundir, which
                         must come from at least --min-threads threads

Prints one line: the measured values (exit 0), or the first reason the report
fails (exit 1).

usage: check.py codegen BINARY FUNCTION store|load N

Checks with objdump that FUNCTION has exactly N instructions that store
(resp. load) memory, so that a planted kernel really has the single access
instruction its analytic fraction assumes (stack pushes/pops, call and ret
are not counted).
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys


class Fail(Exception):
    pass


def parse_frame(spec):
    parts = spec.rsplit(":", 2)
    if len(parts) != 3 or not parts[2].isdigit():
        raise SystemExit("check.py: bad frame spec %r (want FUNCTION:FILE:LINE)" % spec)
    return parts[0], os.path.basename(parts[1]), int(parts[2])


def leaf(side, what):
    frames = side.get("frames") or []
    if not frames:
        raise Fail("a pair has a %s context without frames" % what)
    f = frames[0]
    return f.get("function"), os.path.basename(f.get("file") or ""), f.get("line")


def fmt(frame):
    return "%s:%s:%s" % frame


def matches(pair, watch, trap):
    return leaf(pair["watch"], "watch") == watch and leaf(pair["trap"], "trap") == trap


def frames_of(side):
    return [(f.get("function"), os.path.basename(f.get("file") or ""), f.get("line"))
            for f in side.get("frames") or []]


def check_callers(pairs, watch, trap, callers):
    """The planted pair's contexts go on from their leaves with callers."""
    for p in pairs:
        if not matches(p, watch, trap):
            continue
        for what in ("watch", "trap"):
            got = frames_of(p[what])[1:1 + len(callers)]
            if got != callers:
                raise Fail("the %s context's callers are %s, expected %s" %
                           (what, ", ".join(map(fmt, got)) or "none", ", ".join(map(fmt, callers))))
        return


def describe(pairs, n):
    out = []
    for p in pairs[:n]:
        out.append("%.1f%% %s -> %s" % (100 * p["fraction"], fmt(leaf(p["watch"], "watch")),
                                       fmt(leaf(p["trap"], "trap"))))
    return "; ".join(out) or "no pairs"


def raw_counts(rundir, watch, trap):
    """Sum of the counts of WATCH->TRAP pairs over the raw profiles, and the
    per-thread counts (docs/profile-format.md)."""
    per_thread = []
    for path in sorted(glob.glob(os.path.join(rundir, "*", "*.wasp"))):
        frames, ctxs, count = {}, {}, 0
        with open(path, encoding="utf-8") as f:
            for line in f:
                rec = line.rstrip("\n").split("\t")
                if rec[0] == "frame":
                    frames[rec[1]] = (rec[2], os.path.basename(rec[3]), int(rec[4]))
                elif rec[0] == "ctx":
                    ctxs[rec[1]] = frames[rec[2].split(",")[0]]
                elif rec[0] == "pair":
                    if ctxs[rec[1]] == watch and ctxs[rec[2]] == trap:
                        count += int(rec[3])
        if count:
            per_thread.append(count)
    return per_thread


def rundir_note(rundir):
    """What the run directory holds, for failure messages."""
    if not rundir or not os.path.isdir(rundir):
        return ""
    dirs = [d for d in os.listdir(rundir) if os.path.isdir(os.path.join(rundir, d))]
    empty = [d for d in dirs if not glob.glob(os.path.join(rundir, d, "*.wasp"))]
    note = " (%s holds %d process directories" % (rundir, len(dirs))
    if empty:
        note += ", %d without any profile: %s" % (len(empty), ", ".join(sorted(empty)))
    return note + ")"


def check(args):
    try:
        with open(args.report, encoding="utf-8") as f:
            rep = json.load(f)
    except (OSError, ValueError) as e:
        raise Fail("report is not JSON: %s" % e)
    for key in ("mode", "totals", "pairs"):
        if key not in rep:
            raise Fail("report has no %r" % key)
    totals, pairs = rep["totals"], rep["pairs"]
    for key in ("fraction", "approx_fraction", "bytes", "wasteful_bytes", "samples", "traps"):
        if key not in totals:
            raise Fail("totals has no %r" % key)
    if args.processes is not None and rep.get("processes") != args.processes:
        raise Fail("report merges %r processes, expected %d%s" %
                   (rep.get("processes"), args.processes, rundir_note(args.rundir)))
    if args.min_threads is not None and not (rep.get("threads") or 0) >= args.min_threads:
        raise Fail("report merges %r threads, expected at least %d%s" %
                   (rep.get("threads"), args.min_threads, rundir_note(args.rundir)))
    if not totals["samples"] > 0:
        raise Fail("totals.samples is %r" % totals["samples"])
    if not totals["traps"] > 0:
        raise Fail("totals.traps is %r" % totals["traps"])
    if not pairs:
        raise Fail("no pairs (samples %d, traps %d)" % (totals["samples"], totals["traps"]))
    fr = [p["fraction"] for p in pairs]
    if fr != sorted(fr, reverse=True):
        raise Fail("pairs are not sorted by fraction: %s" % fr[:10])

    # "top" ranks by all their waste, approximate included (the report sorts
    # by the precise fraction, under which an approximate-only plant ties
    # with every pair that wasted nothing); with --first, by --field.
    if args.first:
        ranked = sorted(pairs, key=lambda p: p[args.field], reverse=True)
    else:
        ranked = sorted(pairs, key=lambda p: p["fraction"] + (p.get("approx_fraction") or 0), reverse=True)
    for watch, trap in args.pair:
        top = ranked[:args.top]
        if not any(matches(p, watch, trap) for p in top):
            raise Fail("planted pair %s -> %s not in the top %d (%s)" %
                       (fmt(watch), fmt(trap), args.top, describe(ranked, args.top)))
    for watch, trap in args.exists:
        if not any(matches(p, watch, trap) for p in pairs):
            raise Fail("pair %s -> %s not in the report (%s)" %
                       (fmt(watch), fmt(trap), describe(pairs, 10)))
    for prefix, trap in args.insn_pair:
        top = pairs[:args.top]
        if not any((p["watch"].get("instruction") or "").startswith(prefix) and
                   leaf(p["trap"], "trap") == trap and p["fraction"] > 0 for p in top):
            raise Fail("no pair '%s...' -> %s with waste in the top %d (%s)" %
                       (prefix, fmt(trap), args.top, describe(pairs, args.top)))
    for watch, trap in args.absent:
        if any(matches(p, watch, trap) for p in pairs):
            raise Fail("pair %s -> %s is in the report, expected absent" % (fmt(watch), fmt(trap)))
    for name, least in args.min_stat:
        got = (rep.get("stats") or {}).get(name, 0)
        if got < least:
            raise Fail("stats.%s is %r, expected at least %d" % (name, got, least))
    for name, least in args.min_drop:
        got = (rep.get("drops") or {}).get(name, 0)
        if got < least:
            raise Fail("drops.%s is %r, expected at least %d" % (name, got, least))

    if args.expect is not None:
        got = totals[args.field]
        if abs(got - args.expect) > args.tol:
            raise Fail("totals.%s is %.1f%%, expected %.1f%% +- %.1f" %
                       (args.field, 100 * got, 100 * args.expect, 100 * args.tol))
    if args.expect_fraction is not None:
        got = totals["fraction"]
        if abs(got - args.expect_fraction) > args.tol:
            raise Fail("totals.fraction is %.1f%%, expected %.1f%% +- %.1f" %
                       (100 * got, 100 * args.expect_fraction, 100 * args.tol))

    if args.first and args.pair:
        watch, trap = args.pair[0]
        key = "fraction" if args.field == "fraction" else "approx_fraction"
        best = max(pairs, key=lambda p: p[key])
        if not matches(best, watch, trap):
            raise Fail("planted pair %s -> %s is not the largest by %s: %.2f%% %s -> %s is" %
                       (fmt(watch), fmt(trap), key, 100 * best[key], fmt(leaf(best["watch"], "watch")),
                        fmt(leaf(best["trap"], "trap"))))
    if args.callers:
        check_callers(pairs, args.pair[0][0], args.pair[0][1], args.callers)
    if args.sampler is not None and rep.get("sampler") != args.sampler:
        raise Fail("report sampler is %r, expected %r" % (rep.get("sampler"), args.sampler))

    extra = ""
    if args.merged:
        watch, trap = args.pair[0]
        same = [p for p in pairs if matches(p, watch, trap)]
        if len(same) != 1:
            raise Fail("pair %s -> %s appears %d times, expected once (merged)" %
                       (fmt(watch), fmt(trap), len(same)))
        per_thread = raw_counts(args.rundir, watch, trap)
        need = args.min_threads or 2
        if len(per_thread) < need:
            raise Fail("raw profiles hold the pair in %d threads, expected at least %d" %
                       (len(per_thread), need))
        if same[0]["count"] != sum(per_thread):
            raise Fail("merged count %d != sum of per-thread counts %s" % (same[0]["count"], per_thread))
        extra = ", count %d = %s" % (same[0]["count"], "+".join(map(str, per_thread)))

    print("fraction %.1f%%, approx %.1f%%, samples %d, traps %d, pairs %d%s" %
          (100 * totals["fraction"], 100 * totals["approx_fraction"], totals["samples"],
           totals["traps"], len(pairs), extra))


NOT_ACCESS = re.compile(r"^(lea|nop|prefetch|call|jmp|j[a-z]+|push|pop|ret|endbr)")
READ_ONLY = re.compile(r"^(cmp|test|bt|u?comis|ptest)")


def codegen(binary, function, kind, want):
    try:
        out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", binary], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        print("cannot disassemble %s: %s" % (binary, e))
        return 1
    inside, found, accesses = False, False, []
    for line in out.splitlines():
        if re.match(r"^[0-9a-f]+ <%s>:$" % re.escape(function), line):
            inside = found = True
            continue
        if inside and not line.strip():
            break
        if not inside or "\t" not in line:
            continue
        text = line.split("\t", 1)[1].split("#")[0].strip()
        parts = text.split(None, 1)
        mnem, ops = parts[0], parts[1] if len(parts) > 1 else ""
        if "(" not in ops or NOT_ACCESS.match(mnem):
            continue
        last_is_mem = ops.endswith(")")
        loads = not last_is_mem or READ_ONLY.match(mnem) or not mnem.startswith("mov")
        stores = last_is_mem and not READ_ONLY.match(mnem)
        if (kind == "store" and stores) or (kind == "load" and loads):
            accesses.append(text)
    if not found:
        print("no function %s in %s" % (function, binary))
        return 1
    if len(accesses) != want:
        print("codegen: %s has %d %s instructions, the planted fraction assumes %d: %s" %
              (function, len(accesses), kind, want, "; ".join(accesses)))
        return 1
    return 0


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "codegen":
        return codegen(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("report")
    ap.add_argument("--pair", nargs=2, action="append", default=[], metavar=("WATCH", "TRAP"))
    ap.add_argument("--exists", nargs=2, action="append", default=[], metavar=("WATCH", "TRAP"))
    ap.add_argument("--absent", nargs=2, action="append", default=[], metavar=("WATCH", "TRAP"))
    ap.add_argument("--insn-pair", nargs=2, action="append", default=[], metavar=("PREFIX", "TRAP"))
    ap.add_argument("--callers")
    ap.add_argument("--min-drop", nargs=2, action="append", default=[], metavar=("NAME", "N"))
    ap.add_argument("--min-stat", nargs=2, action="append", default=[], metavar=("NAME", "N"))
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("--first", action="store_true")
    ap.add_argument("--sampler")
    ap.add_argument("--field", default="fraction", choices=("fraction", "approx_fraction"))
    ap.add_argument("--expect", type=float)
    ap.add_argument("--expect-fraction", type=float)
    ap.add_argument("--tol", type=float, default=0.05)
    ap.add_argument("--processes", type=int)
    ap.add_argument("--min-threads", type=int)
    ap.add_argument("--rundir")
    ap.add_argument("--merged", action="store_true")
    args = ap.parse_args()
    args.pair = [(parse_frame(w), parse_frame(t)) for w, t in args.pair]
    args.exists = [(parse_frame(w), parse_frame(t)) for w, t in args.exists]
    args.absent = [(parse_frame(w), parse_frame(t)) for w, t in args.absent]
    args.insn_pair = [(prefix, parse_frame(t)) for prefix, t in args.insn_pair]
    args.min_drop = [(name, int(n)) for name, n in args.min_drop]
    args.callers = [parse_frame(f) for f in args.callers.split(",")] if args.callers else []
    if args.callers and not args.pair:
        ap.error("--callers needs a --pair")
    args.min_stat = [(name, int(n)) for name, n in args.min_stat]
    if args.merged and not (args.rundir and args.pair):
        ap.error("--merged needs --rundir and a --pair")
    try:
        check(args)
    except Fail as e:
        print(e)
        return 1
    except (KeyError, TypeError, ValueError, IndexError) as e:
        print("malformed report: %s: %s" % (type(e).__name__, e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

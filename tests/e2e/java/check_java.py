#!/usr/bin/env python3
"""check_java.py - assertions for the Java end-to-end tests (tests/e2e/java.sh).

usage: check_java.py report REPORT.json [options]

  A FRAMES argument is one or more frame specs joined by ';', leaf first:
  FUNCTION:FILE:LINE where LINE is N or a range N-M (FILE compared by base
  name). The first spec must match the context's leaf frame; each further
  spec must match a later frame of the same context, in order (callers may
  be skipped, so "java.util.Arrays.fill:Arrays.java:3182;Main.run:Main.java:9"
  says "the store is in Arrays.fill, called (maybe through other frames) from
  Main.run at line 9").

  --pair W T           a pair (watch context W, trap context T) among the top
                       --top pairs of the report (sorted by fraction). Repeatable.
  --any-pair W T W2 T2 at least one of the two pairs among the top --top.
  --exists W T         a pair somewhere in the report.
  --absent W T         no pair of the report matches (e.g. across a GC).
  --top N              how far down --pair may be (default 3)
  --fraction LO HI     totals.fraction must lie in [LO, HI]
  --site FRAMES LO HI  the site fraction of FRAMES: sum of wasteful bytes /
                       sum of bytes over the pairs whose watch context matches
                       FRAMES, must lie in [LO, HI] (needs >= 20 such watches
                       to mean anything). With --rundir it is computed from
                       the raw per-thread profiles and leaves out watches on
                       stack slots ((%rsp) operands: register spills that C2's
                       debug info puts on the planted line). Repeatable.
  --min-threads N      the report merges at least N thread profiles
  --stat NAME MIN      report stats[NAME] >= MIN. Repeatable.
  --stat-max NAME MAX  report stats[NAME] (0 when absent) <= MAX. Repeatable.
  --found MIN          at least MIN of the samples found an access of the
                       monitored kind: 1 - (not_memory + wrong_kind) / samples
  --rundir DIR         the run directory (raw per-thread profiles)
  --merged             the first --pair must be one entry of the report whose
                       count is the sum of its counts in the raw profiles of
                       --rundir, coming from at least --min-threads threads
  --cpu-file FILE      FILE has lines "cpu THREAD-NAME NANOS" (the thread's
                       CPU time, printed by the program): the raw profile of
                       each such thread must hold NANOS / interval samples,
                       +-25% (the per-thread CPU-time sampler works in it)
  --frame REGEX        some frame of some pair's contexts has a function name
                       matching REGEX (Python re.search)
  --thread-names PREFIX COUNT
                       the raw profiles under --rundir hold at most one profile
                       for each thread named PREFIX0001..PREFIX<COUNT>, and the
                       ended-threads profiles (tid 0) fold at least as many
                       threads as have none

  Prints one line: what was measured (exit 0), or the first failure (exit 1).

usage: check_java.py jdkline JAVAP CLASS METHOD OPCODE
  The source line(s) of the OPCODE instructions (e.g. iastore; several
  opcodes as "invokevirtual|invokespecial"; ANY for every instruction, i.e.
  the method's line range) in the method of CLASS whose javap declaration
  contains METHOD (e.g. "void fill(int[], int)"), from its LineNumberTable:
  prints "N" (one line) or "N-M" (several). Exit 1 if the method or the
  opcode is not found.

usage: check_java.py profile-ok REPORT.json
  The report is JSON with totals.samples > 0.
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


# --- frame specs -------------------------------------------------------------

def parse_spec(text):
    parts = text.rsplit(":", 2)
    if len(parts) == 3 and re.fullmatch(r"[\d-]+", parts[2]):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", parts[2])
        if not m:
            raise SystemExit("check_java.py: bad line %r in %r" % (parts[2], text))
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        return (parts[0], os.path.basename(parts[1]), lo, hi)
    parts = text.rsplit(":", 1)
    if len(parts) != 2 or not parts[1]:
        raise SystemExit("check_java.py: bad frame spec %r (want FUNCTION:FILE[:LINE])" % text)
    return (parts[0], os.path.basename(parts[1]), 0, 1 << 30)   # any line


def parse_frames(text):
    return [parse_spec(s) for s in text.split(";") if s]


def spec_str(specs):
    out = []
    for f, file, lo, hi in specs:
        if hi == 1 << 30:
            out.append("%s:%s" % (f, file))
        else:
            out.append("%s:%s:%s" % (f, file, lo if lo == hi else "%d-%d" % (lo, hi)))
    return ";".join(out)


def frame_matches(frame, spec):
    func, file, line = frame
    sf, sfile, lo, hi = spec
    return func == sf and os.path.basename(file or "") == sfile and lo <= (line or 0) <= hi


def ctx_matches(frames, specs):
    """frames: list of (function, file, line), leaf first."""
    if not frames or not frame_matches(frames[0], specs[0]):
        return False
    i = 1
    for spec in specs[1:]:
        while i < len(frames) and not frame_matches(frames[i], spec):
            i += 1
        if i == len(frames):
            return False
        i += 1
    return True


def side_frames(side):
    return [(f.get("function"), f.get("file") or "", f.get("line")) for f in side.get("frames") or []]


def pair_matches(pair, w, t):
    return ctx_matches(side_frames(pair["watch"]), w) and ctx_matches(side_frames(pair["trap"]), t)


def short(side, n=3):
    fr = side_frames(side)
    s = " < ".join("%s:%s" % (f, l) for f, _, l in fr[:n])
    return s + (" < ..." if len(fr) > n else "")


def describe(pairs, n):
    return "; ".join("%.1f%% %s -> %s" % (100 * p["fraction"], short(p["watch"]), short(p["trap"]))
                     for p in pairs[:n]) or "no pairs"


# --- raw profiles (docs/profile-format.md) -----------------------------------

def read_raw(path):
    """(header dict, stats dict, [(watch frames, trap frames, count, bytes,
    wasteful bytes)]); a frame is (function, file, line, instruction)."""
    head, stats, frames, ctxs, pairs = {}, {}, {}, {}, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            rec = line.rstrip("\n").split("\t")
            if rec[0] == "frame":
                frames[rec[1]] = (rec[2], os.path.basename(rec[3]), int(rec[4]), rec[7] if len(rec) > 7 else "")
            elif rec[0] == "ctx":
                ctxs[rec[1]] = [frames[x] for x in rec[2].split(",")]
            elif rec[0] == "pair":
                pairs.append((ctxs[rec[1]], ctxs[rec[2]], int(rec[3]), int(rec[4]), int(rec[5])))
            elif rec[0] == "stat":
                stats[rec[1]] = int(rec[2])
            elif rec[0] != "end":
                head[rec[0]] = rec[1] if len(rec) > 1 else ""
    return head, stats, pairs


def raw_files(rundir):
    return sorted(glob.glob(os.path.join(rundir, "*", "*.wasp")))


# --- checks ------------------------------------------------------------------

STACK = re.compile(r"\(%rsp[,)]")


def check(args):
    try:
        with open(args.report, encoding="utf-8") as f:
            rep = json.load(f)
    except (OSError, ValueError) as e:
        raise Fail("report is not JSON: %s" % e)
    totals, pairs = rep["totals"], rep["pairs"]
    if not totals["samples"] > 0:
        raise Fail("totals.samples is %r" % totals["samples"])
    if args.min_threads is not None and not (rep.get("threads") or 0) >= args.min_threads:
        raise Fail("report merges %r threads, expected at least %d" % (rep.get("threads"), args.min_threads))
    for name, least in args.stat:
        got = rep.get("stats", {}).get(name)
        if got is None or got < float(least):
            raise Fail("stats.%s is %r, expected >= %s" % (name, got, least))
    for name, most in args.stat_max:
        got = rep.get("stats", {}).get(name, 0)
        if got > float(most):
            raise Fail("stats.%s is %r, expected <= %s" % (name, got, most))
    if args.found is not None:
        drops = rep.get("drops", {})
        missed = drops.get("not_memory", 0) + drops.get("wrong_kind", 0)
        found = 1 - missed / totals["samples"]
        if found < args.found:
            raise Fail("%.1f%% of %d samples found an access of the monitored kind, expected >= %.0f%% "
                       "(not_memory %d, wrong_kind %d)" % (100 * found, totals["samples"], 100 * args.found,
                                                         drops.get("not_memory", 0), drops.get("wrong_kind", 0)))
    fr = [p["fraction"] for p in pairs]
    if fr != sorted(fr, reverse=True):
        raise Fail("pairs are not sorted by fraction")

    top = pairs[:args.top]
    for w, t in args.pair:
        if not any(pair_matches(p, w, t) for p in top):
            raise Fail("planted pair %s -> %s not in the top %d (%s)" %
                       (spec_str(w), spec_str(t), args.top, describe(pairs, args.top)))
    for w, t, w2, t2 in args.any_pair:
        if not any(pair_matches(p, w, t) or pair_matches(p, w2, t2) for p in top):
            raise Fail("neither %s -> %s nor %s -> %s in the top %d (%s)" %
                       (spec_str(w), spec_str(t), spec_str(w2), spec_str(t2), args.top,
                        describe(pairs, args.top)))
    for w, t in args.exists:
        if not any(pair_matches(p, w, t) for p in pairs):
            raise Fail("pair %s -> %s not in the report (%s)" % (spec_str(w), spec_str(t), describe(pairs, 8)))
    for w, t in args.absent:
        bad = [p for p in pairs if pair_matches(p, w, t)]
        if bad:
            raise Fail("pair %s -> %s must not exist, found %d (count %d)" %
                       (spec_str(w), spec_str(t), len(bad), sum(p["count"] for p in bad)))

    notes = ["fraction %.1f%%" % (100 * totals["fraction"])]
    if args.fraction:
        lo, hi = args.fraction
        if not lo <= totals["fraction"] <= hi:
            raise Fail("totals.fraction is %.1f%%, expected %.0f%%..%.0f%% (%s)" %
                       (100 * totals["fraction"], 100 * lo, 100 * hi, describe(pairs, 3)))
    for specs, lo, hi in args.site:
        count = nbytes = waste = 0
        if args.rundir:
            # From the raw profiles, where each context's leaf still carries
            # its instruction: stack accesses (register spills, which C2's
            # debug info puts on the line of whatever code follows them) are
            # not the planted access, so they are left out.
            for path in raw_files(args.rundir):
                for cw, ct, c, b, wb in read_raw(path)[2]:
                    if ctx_matches([x[:3] for x in cw], specs) and not STACK.search(cw[0][3]):
                        count, nbytes, waste = count + c, nbytes + b, waste + wb
        else:
            for p in pairs:
                if ctx_matches(side_frames(p["watch"]), specs):
                    count, nbytes, waste = count + p["count"], nbytes + p["bytes"], waste + p["wasteful_bytes"]
        if count < 20 or not nbytes:
            raise Fail("site %s has only %d watches that trapped (need 20)" % (spec_str(specs), count))
        frac = waste / nbytes
        if not lo <= frac <= hi:
            raise Fail("site %s: %.1f%% of %d watches wasteful, expected %.0f%%..%.0f%%" %
                       (spec_str(specs), 100 * frac, count, 100 * lo, 100 * hi))
        notes.append("site %s %.1f%% of %d" % (specs[0][0].rsplit(".", 1)[-1], 100 * frac, count))

    if args.merged:
        w, t = args.pair[0]
        same = [p for p in pairs if pair_matches(p, w, t)]
        if len(same) != 1:
            raise Fail("pair %s -> %s appears %d times, expected once (merged)" %
                       (spec_str(w), spec_str(t), len(same)))
        p = same[0]
        want_w, want_t = side_frames(p["watch"]), side_frames(p["trap"])
        per_thread = []
        for path in raw_files(args.rundir):
            _, _, raw = read_raw(path)
            n = sum(c for cw, ct, c, _, _ in raw
                    if [x[:3] for x in cw] == [(f, os.path.basename(fl), l) for f, fl, l in want_w]
                    and [x[:3] for x in ct] == [(f, os.path.basename(fl), l) for f, fl, l in want_t])
            if n:
                per_thread.append(n)
        need = args.min_threads or 2
        if len(per_thread) < need:
            raise Fail("raw profiles hold the pair in %d threads, expected at least %d" % (len(per_thread), need))
        if p["count"] != sum(per_thread):
            raise Fail("merged count %d != sum of per-thread counts %s" % (p["count"], per_thread))
        notes.append("count %d = %s" % (p["count"], "+".join(map(str, per_thread))))

    for regex in args.frame:
        names = {f for p in pairs for side in (p["watch"], p["trap"]) for f, _, _ in side_frames(side)}
        hits = sorted(n for n in names if n and re.search(regex, n))
        if not hits:
            raise Fail("no frame matches %s (e.g. %s)" % (regex, ", ".join(sorted(n for n in names if n)[:4])))
        notes.append("frame %s" % hits[0])

    if args.thread_names:
        # A worker that ended with no pair has no file of its own: the
        # ended-threads profile (tid 0) counts it, among threads_folded.
        prefix, want = args.thread_names[0], int(args.thread_names[1])
        names, folded = {}, 0
        files = raw_files(args.rundir)
        for path in files:
            head, stats, _ = read_raw(path)
            if head.get("tid") == "0":
                folded += stats.get("threads_folded", 0)
                continue
            name = head.get("thread", "")
            if name.startswith(prefix):
                names[name] = names.get(name, 0) + 1
        expected = {"%s%04d" % (prefix, i) for i in range(1, want + 1)}
        missing = sorted(expected - set(names))
        dup = sorted(n for n, c in names.items() if c > 1)
        extra = sorted(set(names) - expected)
        if len(missing) > folded or dup or extra:
            raise Fail("%d of %d worker threads have no profile (e.g. %s) and %d were folded, %d have several, "
                       "%d unexpected names" % (len(missing), want, ", ".join(missing[:5]), folded, len(dup), len(extra)))
        notes.append("%d worker profiles and %d threads folded, in %d files" % (len(names), folded, len(files)))

    if args.cpu_file:
        # "cpu NAME NANOS" lines the program printed: each thread's profile
        # must hold one sample per sampling period of its CPU time (+-25%).
        interval = rep.get("interval") or 0
        samples = {}
        for path in raw_files(args.rundir):
            head, stats, _ = read_raw(path)
            samples[head.get("thread", "")] = samples.get(head.get("thread", ""), 0) + stats.get("samples", 0)
        ratios = []
        with open(args.cpu_file, encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) != 3 or parts[0] != "cpu":
                    continue
                name, nanos = parts[1][:15], int(parts[2])
                want = nanos / interval if interval else 0
                got = samples.get(name, 0)
                if not want or not 0.75 <= got / want <= 1.25:
                    raise Fail("thread %s ran %.0f ms of CPU, %d samples at %d ns: expected about %.0f" %
                               (name, nanos / 1e6, got, interval, want))
                ratios.append(got / want)
        if not ratios:
            raise Fail("no 'cpu NAME NANOS' lines in %s" % args.cpu_file)
        notes.append("samples/CPU period %s" % ",".join("%.2f" % r for r in ratios))

    notes.append("samples %d, traps %d, threads %s, pairs %d" %
                 (totals["samples"], totals["traps"], rep.get("threads"), rep.get("pairs_total", len(pairs))))
    print(", ".join(notes))


# --- javap -------------------------------------------------------------------

def jdkline(javap, cls, method, opcode):
    try:
        out = subprocess.run([javap, "-c", "-l", "-p", cls], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        print("javap %s failed: %s" % (cls, e))
        return 1
    lines = out.splitlines()
    start = None
    for i, l in enumerate(lines):
        if l.startswith("  ") and not l.startswith("   ") and method in l and l.rstrip().endswith(";") and "(" in l:
            start = i
            break
    if start is None:
        print("no method containing %r in %s" % (method, cls))
        return 1
    bcis, table = [], []
    in_table = False
    for l in lines[start + 1:]:
        if l.startswith("  ") and not l.startswith("   ") and l.strip():
            break  # next member
        m = re.match(r"\s+(\d+): (\w+)", l)
        if "LineNumberTable:" in l:
            in_table = True
            continue
        if in_table:
            mt = re.match(r"\s+line (\d+): (\d+)", l)
            if mt:
                table.append((int(mt.group(2)), int(mt.group(1))))
                continue
            in_table = False
        if m and (opcode == "ANY" or m.group(2) in opcode.split("|")):
            bcis.append(int(m.group(1)))
    if not bcis or not table:
        print("no %s (or no LineNumberTable) in %s.%s" % (opcode, cls, method))
        return 1
    found = set()
    for bci in bcis:
        best = max((e for e in table if e[0] <= bci), key=lambda e: e[0])
        found.add(best[1])
    lo, hi = min(found), max(found)
    print(lo if lo == hi else "%d-%d" % (lo, hi))
    return 0


def profile_ok(path):
    try:
        with open(path, encoding="utf-8") as f:
            rep = json.load(f)
        samples = rep["totals"]["samples"]
    except (OSError, ValueError, KeyError) as e:
        print("unreadable report: %s" % e)
        return 1
    if not samples > 0:
        print("totals.samples is %r" % samples)
        return 1
    print("samples %d, threads %s, pairs %s" % (samples, rep.get("threads"), rep.get("pairs_total")))
    return 0


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "jdkline":
        return jdkline(*sys.argv[2:6])
    if len(sys.argv) == 3 and sys.argv[1] == "profile-ok":
        return profile_ok(sys.argv[2])
    if len(sys.argv) < 3 or sys.argv[1] != "report":
        print(__doc__)
        return 2
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("report")
    ap.add_argument("--pair", nargs=2, action="append", default=[])
    ap.add_argument("--any-pair", nargs=4, action="append", default=[])
    ap.add_argument("--exists", nargs=2, action="append", default=[])
    ap.add_argument("--absent", nargs=2, action="append", default=[])
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("--fraction", nargs=2, type=float)
    ap.add_argument("--site", nargs=3, action="append", default=[])
    ap.add_argument("--min-threads", type=int)
    ap.add_argument("--stat", nargs=2, action="append", default=[])
    ap.add_argument("--stat-max", nargs=2, action="append", default=[])
    ap.add_argument("--found", type=float)
    ap.add_argument("--rundir")
    ap.add_argument("--merged", action="store_true")
    ap.add_argument("--thread-names", nargs=2)
    ap.add_argument("--frame", action="append", default=[])
    ap.add_argument("--cpu-file")
    args = ap.parse_args(sys.argv[2:])
    args.pair = [(parse_frames(w), parse_frames(t)) for w, t in args.pair]
    args.any_pair = [tuple(parse_frames(x) for x in q) for q in args.any_pair]
    args.exists = [(parse_frames(w), parse_frames(t)) for w, t in args.exists]
    args.absent = [(parse_frames(w), parse_frames(t)) for w, t in args.absent]
    args.site = [(parse_frames(s), float(lo), float(hi)) for s, lo, hi in args.site]
    if (args.merged or args.thread_names or args.cpu_file) and not args.rundir:
        ap.error("--merged, --thread-names and --cpu-file need --rundir")
    if args.merged and not args.pair:
        ap.error("--merged needs a --pair")
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

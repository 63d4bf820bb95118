#!/usr/bin/env python3
"""analyze.py - turns bench/native.sh's results.tsv into the overhead tables.

Usage: analyze.py results.tsv [--default-ns N] [--empty-interval T] [--mode M] [--markdown]

cpu = user + sys of the whole process; events = samples + traps (from the
profile); signals = SIGTRAPs counted by bench/sigcount.so; exit = CPU used
after main returned (bench_main_done), Δ = profiled minus base. Slowdowns and
RSS ratios are medians over rounds of profiled/base of the same round; extra
CPU is paired the same way, ΔCPU_T = (median ratio - 1) x median CPU_base, so
drift between rounds cancels; counts are per-configuration medians
(docs/benchmarks.md derives the figures):
  handler  = (sample_ns + trap_ns) / events_T           time inside the handlers
  total    = ΔCPU_T / events_T                          all extra CPU, per event
  ±        = MAD of the per-round CPU ratio x CPU_base / events_T
  exit     = Δexit_T                                    once per process
  delivery = (ΔCPU_empty - Δexit_empty) / signals_empty per signal, empty handler
  above    = (ΔCPU_T - Δexit_T - delivery * signals_T) / events_T
  marginal, fixed: least-squares line ΔCPU_T - Δexit_T = fixed + marginal * events_T
                   over the profiled intervals (needs two or more)
"""
import argparse
import csv
import statistics
import sys
from collections import defaultdict

NUM = ("interval_ns", "wall", "user", "sys", "rss_kb", "other", "steal", "signals",
       "samples", "armed", "traps", "sample_ns", "trap_ns", "main_cpu")
NAN = float("nan")


def med(xs):
    xs = list(xs)
    return statistics.median(xs) if xs else NAN


def mad(xs):
    xs = list(xs)
    m = med(xs)
    return med(abs(x - m) for x in xs)


def fmt_interval(ns):
    ns = int(ns)
    if ns and ns % 1_000_000 == 0:
        return f"{ns // 1_000_000}ms"
    if ns and ns % 1000 == 0:
        return f"{ns // 1000}us"
    return f"{ns}ns"


def pct(r):
    return f"{(r - 1) * 100:+.1f}%"


def num(x, digits=1):
    return "-" if x != x else f"{x:.{digits}f}"


def render(header, rows, markdown):
    if markdown:
        out = ["| " + " | ".join(header) + " |",
               "|" + "|".join("---" if i < 2 else "--:" for i in range(len(header))) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(out)
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    just = lambda i, v: v.ljust(widths[i]) if i < 2 else v.rjust(widths[i])
    return "\n".join("  ".join(just(i, v) for i, v in enumerate(r)).rstrip() for r in [header] + rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--default-ns", type=int, default=0)
    ap.add_argument("--empty-interval", default="?")
    ap.add_argument("--mode", default="")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()

    runs = defaultdict(dict)          # (workload, config) -> round -> row
    order_w, order_c = [], []
    with open(a.results) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            for k in NUM:
                row[k] = float(row[k])
            row["cpu"] = row["user"] + row["sys"]
            row["events"] = row["samples"] + row["traps"]
            # CPU spent after main returned (profile writing, symbolization).
            row["exit"] = max(row["cpu"] - row["main_cpu"], 0.0) if row["main_cpu"] else 0.0
            w, c = row["workload"], row["config"]
            runs[(w, c)][int(row["round"])] = row
            if w not in order_w:
                order_w.append(w)
            if c not in order_c and c not in ("base", "empty"):
                order_c.append(c)
    if not runs:
        sys.exit("analyze: no results")

    iv_of = {}                         # config -> interval in ns
    for (w, c), rs in runs.items():
        for r in rs.values():
            iv_of[c] = int(r["interval_ns"])

    def is_default(c):
        return c == "default" or (a.default_ns and iv_of.get(c) == a.default_ns)

    def label(c):
        if c == "default":
            return f"{fmt_interval(a.default_ns)} (default)" if a.default_ns else "default"
        return f"{c} (default)" if is_default(c) else c

    main_hdr = ["workload", "interval", "wall", "cpu", "±cpu", "rss", "events/cpu-s", "samples",
                "armed", "traps", "handler us/ev", "total us/ev", "±us/ev", "exit ms", "above-empty us/ev"]
    cost_hdr = ["workload", "base wall s", "base cpu s", "base rss MB", "delivery us/sig",
                "empty signals", "exit ms", "marginal us/ev", "fixed ms"]
    main_rows, cost_rows = [], []
    summary = defaultdict(list)        # config -> [(wall ratio, cpu ratio)]
    noisy = 0
    for w in order_w:
        base = runs.get((w, "base"), {})
        empty = runs.get((w, "empty"), {})
        if not base:
            continue
        cpu_base = med(r["cpu"] for r in base.values())
        rss_base = med(r["rss_kb"] for r in base.values())
        exit_base = med(r["exit"] for r in base.values())
        deliv, sig_e = NAN, NAN
        if empty:
            sig_e = med(r["signals"] for r in empty.values())
            if sig_e > 0:
                er = sorted(set(empty) & set(base))
                deliv = ((med(empty[i]["cpu"] / base[i]["cpu"] for i in er) - 1) * cpu_base
                         - (med(r["exit"] for r in empty.values()) - exit_base)) / sig_e
        points = []                    # (events, extra cpu before exit) per interval
        exits = []
        for c in sorted(order_c, key=lambda c: iv_of.get(c, 0)):
            prof = runs.get((w, c), {})
            rounds = sorted(set(prof) & set(base))
            if not rounds:
                continue
            P = [prof[i] for i in rounds]
            wall_r = [prof[i]["wall"] / base[i]["wall"] for i in rounds]
            cpu_r = [prof[i]["cpu"] / base[i]["cpu"] for i in rounds]
            rss_r = [prof[i]["rss_kb"] / base[i]["rss_kb"] for i in rounds]
            ev = med(r["events"] for r in P)
            sig = med(r["signals"] for r in P)
            # Paired: the median per-round ratio, so drift between rounds cancels.
            dcpu = (med(cpu_r) - 1) * cpu_base
            dexit = med(r["exit"] for r in P) - exit_base
            points.append((ev, dcpu - dexit))
            exits.append(dexit)
            total = dcpu / ev if ev else NAN
            # The run-to-run spread of the CPU ratio, in µs per event: a per-event
            # figure smaller than this is not resolved.
            noise = mad(cpu_r) * cpu_base / ev if ev else NAN
            above = (dcpu - dexit - deliv * sig) / ev if ev else NAN
            handler = med((r["sample_ns"] + r["trap_ns"]) / 1e9 / r["events"] for r in P if r["events"])
            rss_delta = med(r["rss_kb"] for r in P) - rss_base
            main_rows.append([w, label(c), pct(med(wall_r)), pct(med(cpu_r)), f"{mad(cpu_r) * 100:.1f}%",
                              f"{med(rss_r):.2f}x {rss_delta / 1024:+.1f}M",
                              f"{med(r['events'] / r['cpu'] for r in P):.0f}",
                              f"{med(r['samples'] for r in P):.0f}", f"{med(r['armed'] for r in P):.0f}",
                              f"{med(r['traps'] for r in P):.0f}",
                              num(handler * 1e6), num(total * 1e6), num(noise * 1e6, 0),
                              num(dexit * 1e3), num(above * 1e6)])
            summary[c].append((med(wall_r), med(cpu_r)))
        marginal, fixed = NAN, NAN
        if len(points) >= 2:
            mx = statistics.fmean(p[0] for p in points)
            my = statistics.fmean(p[1] for p in points)
            sxx = sum((p[0] - mx) ** 2 for p in points)
            if sxx > 0:
                marginal = sum((p[0] - mx) * (p[1] - my) for p in points) / sxx
                fixed = my - marginal * mx
        cost_rows.append([w, f"{med(r['wall'] for r in base.values()):.2f}", f"{cpu_base:.2f}",
                          f"{rss_base / 1024:.1f}", num(deliv * 1e6), num(sig_e, 0),
                          num(med(exits) * 1e3), num(marginal * 1e6), num(fixed * 1e3)])
        for c in ["base", "empty"] + order_c:
            noisy += sum(r["other"] + r["steal"] > 0.25 * r["wall"] for r in runs.get((w, c), {}).values())

    print(render(main_hdr, main_rows, a.markdown))
    print()
    print(render(cost_hdr, cost_rows, a.markdown))
    rounds = max(len(v) for v in runs.values())
    print(f"\n{rounds} round(s) per configuration; mode {a.mode or 'default'}; "
          f"delivery from empty-handler=1 runs at {a.empty_interval}.")
    if noisy:
        print(f"note: {noisy} kept run(s) overlapped other load above a quarter core; "
              "wall-time figures are the first to suffer.")
    # One line per interval, shortest first; the default's line comes last.
    keys = sorted((c for c in order_c if summary[c]), key=lambda c: iv_of.get(c, 0))
    keys = [c for c in keys if not is_default(c)] + [c for c in keys if is_default(c)]
    for c in keys:
        ws = med(x[0] for x in summary[c])
        cs = med(x[1] for x in summary[c])
        print(f"median slowdown at {label(c)} over {len(summary[c])} workloads: "
              f"wall {pct(ws)}, cpu {pct(cs)}")


if __name__ == "__main__":
    main()

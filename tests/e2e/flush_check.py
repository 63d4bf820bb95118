#!/usr/bin/env python3
"""flush_check.py - judges a run of tests/e2e/flush.sh (checkpoints).

Usage:
  flush_check.py partial RUN_DIR CPU_FILE tid|thread MIN_RATIO MIN_SAMPLING_MS
      The process was killed (or crashed): every busy thread the program
      listed in CPU_FILE ("KEY CPU_NS" per line, KEY its tid or its name as
      the profile's tid or thread record gives it; rewritten by the program
      every second, and last just before it crashed) must have a checkpoint
      and no final profile; the checkpoint must hold at least MIN_RATIO of
      the CPU time the file says (samples x interval vs the thread's own CPU
      clock), no more than 115% of it (counted twice?), and reach at least
      MIN_SAMPLING_MS from the thread's start.
  flush_check.py guarded RUN_DIR CPU_FILE tid|thread MIN_RATIO MIN_SAMPLING_MS
      The process crashed, and its guardian (a process sharing its memory)
      wrote its final profiles after it: the same, with each busy thread's
      final profile in place of the checkpoint, and no checkpoint left.
  flush_check.py final RUN_DIR REPORT_JSON
      The process ended normally: no checkpoint is left, every thread is
      counted once (the report's threads and samples equal those of the
      final profiles), the report says nothing of checkpoints, and at least
      one thread was checkpointed twice while it ran (else this proves
      nothing).

Prints one line saying why on failure and exits 1; exits 0 when the run
is right.
"""
import glob
import json
import os
import sys


def read_profile(path):
    """The header fields and stats of a profile (text format)."""
    head, stats = {}, {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if parts[0] == "stat" and len(parts) == 3:
                stats[parts[1]] = int(parts[2])
            elif parts[0] in ("tid", "interval", "thread", "pid", "sampler"):
                head[parts[0]] = parts[1] if len(parts) > 1 else ""
    return head, stats


def profiles(run_dir, suffix):
    return sorted(glob.glob(os.path.join(run_dir, "*", "*" + suffix)))


def fail(msg):
    print(msg)
    sys.exit(1)


def check_partial(run_dir, cpu_file, key, min_ratio, min_sampling_ms, guarded=False):
    cpu = {}
    with open(cpu_file) as f:
        for line in f:
            name, ns = line.split()
            cpu[name] = int(ns)
    if not cpu:
        fail("%s lists no busy thread" % cpu_file)
    ckpts = {}
    held, other = (".wasp", ".checkpoint") if guarded else (".checkpoint", ".wasp")
    for path in profiles(run_dir, held):
        head, stats = read_profile(path)
        if not guarded and not stats.get("checkpoint_at_ms"):
            fail("%s: no checkpoint_at_ms stat" % path)
        ckpts[head[key]] = (head, stats)
    left = profiles(run_dir, other)
    if left:
        fail("%s of a process that %s: %s" % (
            "checkpoints left beside the final profiles" if guarded else "final profiles",
            "its guardian wrote for" if guarded else "did not end", ", ".join(left)))
    worst = None
    for name, ns in sorted(cpu.items()):
        if name not in ckpts:
            fail("busy thread %s has no checkpoint" % name)
        head, stats = ckpts[name]
        covered = stats.get("samples", 0) * int(head["interval"])
        ratio = covered / ns if ns else 0
        if ratio < min_ratio or ratio > 1.15:
            fail("thread %s: its checkpoint holds %.2f s of samples, %.0f%% of the %.2f s of CPU "
                 "it had used (want %.0f%% to 115%%)" % (name, covered / 1e9, 100 * ratio,
                                                       ns / 1e9, 100 * min_ratio))
        if stats.get("sampling_ms", 0) < min_sampling_ms:
            fail("thread %s: its checkpoint reaches %d ms into the thread (want >= %d)"
                 % (name, stats.get("sampling_ms", 0), min_sampling_ms))
        worst = ratio if worst is None else min(worst, ratio)
    taken = [s for _, s in ckpts.values() if s.get("checkpoints")]
    pause = sum(s["checkpoint_pause_ns"] for s in taken) / max(sum(s["checkpoints"] for s in taken), 1)
    # The last checkpoint's own write is not in it: divide by the earlier ones.
    earlier = sum(s["checkpoints"] - 1 for s in taken)
    write = sum(s.get("checkpoint_ns", 0) for s in taken) / max(earlier, 1)
    print("%d busy threads, worst coverage %.0f%% of their CPU; per thread-checkpoint: pause "
          "%.1f us, write %.2f ms CPU (means)" % (len(cpu), 100 * worst, pause / 1e3, write / 1e6))


def check_final(run_dir, report_json):
    left = profiles(run_dir, ".checkpoint")
    if left:
        fail("checkpoints left after a normal end: %s" % ", ".join(left))
    finals = [read_profile(p) for p in profiles(run_dir, ".wasp")]
    if not finals:
        fail("no final profiles")
    with open(report_json) as f:
        doc = json.load(f)
    samples = sum(s.get("samples", 0) for _, s in finals)
    if doc["threads"] != len(finals):
        fail("report counts %d threads, %d final profiles" % (doc["threads"], len(finals)))
    if doc["totals"]["samples"] != samples:
        fail("report counts %d samples, the final profiles %d" % (doc["totals"]["samples"], samples))
    if doc["checkpoint_threads"] != 0:
        fail("report says %d threads are from checkpoints" % doc["checkpoint_threads"])
    taken = max(s.get("checkpoints", 0) for _, s in finals)
    if taken < 2:
        fail("no thread was checkpointed twice while it ran (most: %d)" % taken)
    print("%d threads, %d samples, each once; up to %d checkpoints per thread" %
          (len(finals), samples, taken))


def main():
    a = sys.argv[1:]
    if a and a[0] == "partial" and len(a) == 6 and a[3] in ("tid", "thread"):
        check_partial(a[1], a[2], a[3], float(a[4]), int(a[5]))
    elif a and a[0] == "guarded" and len(a) == 6:
        check_partial(a[1], a[2], a[3], float(a[4]), int(a[5]), guarded=True)
    elif a and a[0] == "final" and len(a) == 3:
        check_final(a[1], a[2])
    else:
        print(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()

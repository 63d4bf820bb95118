#!/usr/bin/env python3
"""check.py - the profile checks of the stress suite (tests/stress/run).

  check.py profiles RUNDIR STDERR [--at-most-once] [--samples]

STDERR is the profiled program's stderr: its "#fact proc PID threads N tids
D" lines (tests/stress/stress.h) say what ran. For every process named
there, RUNDIR/PID/ must hold exactly N profiles (the sum over its facts: a
process that exec'd has one fact per image) and no thread id more often
than it was used (N - D + 1 times at most per fact); no other process
directory may exist. --at-most-once: profiles may be missing (a process
ended from a signal handler) but none twice. --samples: the profiles'
samples summed must be > 0 (wasp kept its sampling signal).

  check.py java RUNDIR STDERR

For the JVM soak: "#fact javathreads NAME..." lists the program's own
threads; each must have exactly one profile (by the `thread` header) and
no thread id may have two profiles among them.

Prints a one-line summary; exits 1 with the reason on a failure.
"""
import collections
import os
import sys


def header(path):
    """The header fields of one profile, plus its sample count."""
    fields, samples = {}, 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if parts[0] in ("pid", "tid", "thread", "command") and len(parts) > 1:
                fields[parts[0]] = parts[1]
            elif parts[0] == "stat" and len(parts) == 3 and parts[1] == "samples":
                samples = int(parts[2])
            elif parts[0] in ("frame", "ctx", "pair", "end"):
                break
    fields["samples"] = samples
    return fields


def profiles(rundir):
    """{pid: [header, ...]} for every *.wasp file of the run."""
    out = collections.defaultdict(list)
    if not os.path.isdir(rundir):
        return out
    for d in os.listdir(rundir):
        path = os.path.join(rundir, d)
        if not os.path.isdir(path):
            continue
        for name in os.listdir(path):
            if name.endswith(".wasp"):
                out[d].append(header(os.path.join(path, name)))
    return out


def facts(stderr, kind):
    with open(stderr, encoding="utf-8", errors="replace") as f:
        return [line.split()[2:] for line in f if line.startswith("#fact " + kind + " ")]


def fail(msg):
    print(msg)
    sys.exit(1)


def check_processes(rundir, stderr, at_most_once, want_samples):
    expected = collections.defaultdict(lambda: [0, 0])   # pid -> [threads, tid reuses allowed]
    for f in facts(stderr, "proc"):
        pid, threads, distinct = f[0], int(f[2]), int(f[4])
        expected[pid][0] += threads
        expected[pid][1] += threads - distinct + 1
    if not expected:
        fail("the program printed no #fact proc line")
    got = profiles(rundir)
    extra = sorted(set(got) - set(expected))
    if extra:
        fail(f"profiles of processes the program did not report: {', '.join(extra[:5])}")
    missing, short, dup = [], [], []
    for pid, (threads, reuse) in expected.items():
        files = got.get(pid, [])
        if len(files) > threads or (not at_most_once and len(files) < threads):
            (short if len(files) < threads else dup).append(f"{pid}: {len(files)} of {threads}")
        if not files and not at_most_once:
            missing.append(pid)
        tids = collections.Counter(h.get("tid") for h in files)
        over = [t for t, n in tids.items() if n > reuse]
        if over:
            dup.append(f"{pid}: tid {over[0]} profiled {tids[over[0]]} times")
    if missing:
        fail(f"{len(missing)} of {len(expected)} processes left no profile (e.g. pid {missing[0]})")
    if dup:
        fail(f"threads profiled twice or more: {'; '.join(dup[:3])}")
    if short:
        fail(f"threads without a profile: {'; '.join(short[:3])} ({len(short)} processes short)")
    files = sum(len(v) for v in got.values())
    samples = sum(h["samples"] for v in got.values() for h in v)
    if want_samples and samples == 0:
        fail(f"{files} profiles, 0 samples: wasp lost its sampling signal")
    print(f"{len(expected)} processes, {files} profiles, {samples} samples")


def check_java(rundir, stderr):
    names = [n for f in facts(stderr, "javathreads") for n in f]
    if not names:
        fail("the program printed no #fact javathreads line")
    got = [h for v in profiles(rundir).values() for h in v]
    by_name = collections.Counter(h.get("thread", "") for h in got)
    missing = [n for n in names if by_name[n] == 0]
    twice = [n for n in names if by_name[n] > 1]
    if twice:
        fail(f"{len(twice)} threads profiled twice or more (e.g. {twice[0]}: {by_name[twice[0]]})")
    if missing:
        fail(f"{len(missing)} of {len(names)} program threads without a profile (e.g. {missing[0]})")
    tids = collections.Counter(h.get("tid") for h in got if h.get("thread") in set(names))
    over = [t for t, n in tids.items() if n > 1]
    if over:
        fail(f"tid {over[0]} has {tids[over[0]]} profiles among the program's threads")
    print(f"{len(names)} program threads profiled once, {len(got)} profiles, "
          f"{sum(h['samples'] for h in got)} samples")


def main(argv):
    if len(argv) >= 4 and argv[1] == "profiles":
        check_processes(argv[2], argv[3], "--at-most-once" in argv, "--samples" in argv)
    elif len(argv) == 4 and argv[1] == "java":
        check_java(argv[2], argv[3])
    else:
        fail(__doc__)


if __name__ == "__main__":
    main(sys.argv)

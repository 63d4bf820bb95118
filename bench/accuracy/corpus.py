#!/usr/bin/env python3
"""bench/accuracy/corpus.py OUT [KIB] - a deterministic text corpus for the
compressors of bench/accuracy.sh: log-like lines with repeated and varying
fields, so that the compressors find matches of every length."""
import random, sys

out, kib = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1024
rng = random.Random(20261123)
levels = ["INFO", "WARN", "DEBUG", "ERROR"]
verbs = ["accepted", "rejected", "queued", "retried", "stored", "evicted", "served"]
with open(out, "w") as f:
    size = 0
    while size < kib * 1024:
        line = "2026-11-%02d %02d:%02d:%02d %s worker-%d %s request %08x from 10.%d.%d.%d in %d us\n" % (
            rng.randint(1, 30), rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59),
            rng.choice(levels), rng.randint(1, 16), rng.choice(verbs), rng.getrandbits(32),
            rng.randint(0, 255), rng.randint(0, 255), rng.randint(0, 255), int(rng.expovariate(1 / 300)))
        f.write(line)
        size += len(line)

#!/bin/sh
# bench/reader.sh - how fast and how lean `wasp report` reads profiles.
#
# Generates three profiles into build/bench/reader/ (python3, with correct
# end records) and reports on each with `wasp report --format json`:
#   stats40k  40,000 distinct stats (stats were once merged by linear
#             search: 3.2 s); target < 1 s
#   code320m  about 320 MB, mostly JIT code records (2 MiB of hex each, as
#             a JVM's profile grows) plus 100k frames and contexts;
#             target: peak RSS < 0.5 GB
#   frames    about 100 MB of frame records only (the worst case for
#             memory per byte: each frame is four small strings)
# Prints one line per profile: size, wall time, peak RSS (GNU time) and
# RSS / size of the whole report, then the peak RSS of reading alone
# (`--pid 0` matches no profile: each is parsed, none merged, exit 2).
# Usage: bench/reader.sh [WASP] (default build/bin/wasp).
cd "$(dirname "$0")/.." || exit 2
WASP=${1:-build/bin/wasp}
OUT=build/bench/reader
mkdir -p "$OUT"
[ -x "$WASP" ] || { echo "[wasp] ERROR $WASP missing — run make"; exit 2; }

python3 - "$OUT" <<'PY'
import os, sys, zlib
out = sys.argv[1]

class Writer:
    def __init__(self, path):
        self.f, self.crc, self.lines = open(path, "wb"), 0, 0
    def put(self, line):
        b = line.encode() + b"\n"
        self.f.write(b)
        self.crc = zlib.crc32(b, self.crc)
        self.lines += 1
    def close(self):
        self.f.write(b"end\t%d\t%08x\n" % (self.lines, self.crc))
        self.f.close()

def header(w):
    for line in ["wasp-profile\t1", "mode\tsilent-store", "sampler\tsoftware", "pid\t1",
                 "tid\t1", "thread\tmain", "command\tbench", "interval\t1000000",
                 "fp_tolerance\t0.01"]:
        w.put(line)

def frames_and_pairs(w, n, start=0x400000):
    for i in range(n):
        w.put("frame\t%d\tfunction_%d\tsource_file_%d.c\t%d\t/usr/lib/libbench.so\t0x%x\tmovq %%rax, 0x10(%%rdx)"
              % (i, i, i % 1000, i % 5000 + 1, start + 16 * i))
    for i in range(n // 2):
        w.put("ctx\t%d\t%d,%d" % (i, 2 * i, 2 * i + 1))
    for i in range(n // 2 - 1):
        w.put("pair\t%d\t%d\t3\t24\t8\t0" % (i, i + 1))

w = Writer(os.path.join(out, "stats40k.wasp"))
header(w)
for i in range(40000):
    w.put("stat\tdrop.reason_%05d\t%d" % (i, i))
w.close()

w = Writer(os.path.join(out, "code320m.wasp"))
header(w)
frames_and_pairs(w, 100000)
code = (bytes(range(256)) * 4096).hex()          # 1 MiB of code: 2 MiB of hex
for i in range(150):
    w.put("code\t%d\tbench.Method%d\t0x%x\t%s" % (i, i, 0x7f0000000000 + i * (2 << 20), code))
    w.put("codeline\t%d\t0\t%d\tbench.Method%d\tBench.java" % (i, i + 1, i))
w.close()

w = Writer(os.path.join(out, "frames.wasp"))
header(w)
frames_and_pairs(w, 1000000)
w.close()
PY

for p in stats40k code320m frames; do
    f=$OUT/$p.wasp
    size=$(stat -c %s "$f")
    /usr/bin/time -f '%e %M' -o "$OUT/$p.time" "$WASP" report "$f" --format json >/dev/null 2>"$OUT/$p.err" ||
        { echo "$p: wasp report failed: $(tail -n 1 "$OUT/$p.err")"; continue; }
    read -r secs kb <"$OUT/$p.time"
    /usr/bin/time -f '%e %M' -o "$OUT/$p.read" "$WASP" report "$f" --pid 0 >/dev/null 2>&1
    read -r rsecs rkb <<EOF
$(tail -n 1 "$OUT/$p.read")
EOF
    awk -v p="$p" -v size="$size" -v secs="$secs" -v kb="$kb" -v rkb="$rkb" 'BEGIN {
        printf "%-9s %7.1f MB  %6.2f s  peak RSS %7.1f MB  (%.2f x the file); reading alone %7.1f MB (%.2f x)\n",
               p, size / 1e6, secs, kb / 1024, kb * 1024 / size, rkb / 1024, rkb * 1024 / size }'
done

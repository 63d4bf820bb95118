# workload.py - a CPU-heavy Python 2.7 program for Jython (bench/real-java.sh).
# Dictionary word counts, string formatting and splitting, list sorting and a
# small numeric loop: Jython's PyDictionary/PyString/PyList/PyInteger
# machinery does the work. Usage: jython workload.py [scale]
from __future__ import print_function
import sys

scale = int(sys.argv[1]) if len(sys.argv) > 1 else 5

class Rng(object):
    def __init__(self, seed):
        self.s = seed
    def next(self):
        self.s = (self.s * 1103515245 + 12345) % 2147483648
        return self.s

def words(n, rng):
    syll = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'ze', 'po']
    out = []
    for i in range(n):
        out.append(''.join(syll[rng.next() % 10] for _ in range(1 + rng.next() % 3)))
    return ' '.join(out)

def count(text):
    d = {}
    for w in text.split(' '):
        d[w] = d.get(w, 0) + 1
    items = sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))
    return len(items), items[0][0]

def records(n, rng):
    recs = [(rng.next() % 1000, i, 'r%d' % (i % 977)) for i in range(n)]
    recs.sort()
    return sum(r[0] for r in recs[::7])

def mandel(size):
    total = 0
    for y in range(size):
        for x in range(size):
            cr, ci = 2.0 * x / size - 1.5, 2.0 * y / size - 1.0
            zr = zi = 0.0
            k = 0
            while k < 50 and zr * zr + zi * zi < 4.0:
                zr, zi = zr * zr - zi * zi + cr, 2 * zr * zi + ci
                k += 1
            total += k
    return total

rng = Rng(42)
check = []
for r in range(scale):
    check.append(count(words(40000, rng)))
    check.append(records(30000, rng))
    check.append(mandel(120))
print('workload.py: scale %d, %s' % (scale, check[-3:]))

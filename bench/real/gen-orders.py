#!/usr/bin/env python3
"""gen-orders.py N OUT - writes an XML order book with N orders for the Saxon run."""
import random
import sys

n, out = int(sys.argv[1]), sys.argv[2]
rnd = random.Random(7)
regions = ["north", "south", "east", "west", "central"]
products = ["p%03d" % i for i in range(400)]
with open(out, "w") as f:
    f.write('<?xml version="1.0" encoding="UTF-8"?>\n<orders>\n')
    for i in range(n):
        f.write('  <order id="%d" region="%s" date="2024-%02d-%02d">\n'
                % (i, rnd.choice(regions), 1 + rnd.randrange(12), 1 + rnd.randrange(28)))
        for _ in range(1 + rnd.randrange(4)):
            f.write('    <line product="%s" qty="%d" price="%.2f"/>\n'
                    % (rnd.choice(products), 1 + rnd.randrange(20), rnd.uniform(0.5, 300)))
        f.write('    <note>%s</note>\n  </order>\n' % " ".join(rnd.choice(products) for _ in range(5)))
    f.write('</orders>\n')

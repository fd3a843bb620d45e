#!/usr/bin/env python3
"""ab.py DIR [A B]: a rotating A/B's table from DIR/ab-<i>-<build>.json.

Per shape, M and variant: each run's median (us) in run order for build A
and for build B, and the ratio of the medians of those medians, A over B,
as a Markdown table. A and B default to the two build names in the files
(the first run's build is A).
"""
import glob
import json
import re
import statistics
import sys

d = sys.argv[1]
runs = []
for f in glob.glob(f"{d}/ab-*.json"):
    i, b = re.search(r"ab-(\d+)-(.*)\.json$", f).groups()
    recs = json.load(open(f))["records"]
    runs.append((int(i), b, {(r["shape"], r["m"], r["variant"]): r["median_us"] for r in recs}))
runs.sort()
names = sys.argv[2:4] if len(sys.argv) >= 4 else list(dict.fromkeys(b for _, b, _ in runs))[:2]
a, b = names
print(f"| shape | M | variant | {a} | {b} | {a}/{b} |")
print("|---|---|---|---|---|---|")
for k in sorted(runs[0][2]):
    if not k[2].startswith("wp"):  # the suite's baseline and peer rows are not under test
        continue
    va = [m[k] for _, n, m in runs if n == a and k in m]
    vb = [m[k] for _, n, m in runs if n == b and k in m]
    if not va or not vb:
        continue
    r = statistics.median(va) / statistics.median(vb) - 1
    print(f"| {k[0]} | {k[1]} | {k[2]} | {' '.join(f'{x:.3f}' for x in va)} | {' '.join(f'{x:.3f}' for x in vb)} | {100 * r:+.2f}% |")

#!/usr/bin/env python3
"""sass.py FILE.csv.gz [N]: the N SASS instructions with the most warp
stall samples in an ncu source page (--page source --csv --print-source
sass), each with its share of all samples and its top stall reasons, and
the samples summed by reason."""
import csv, gzip, sys, collections
rows = list(csv.reader(gzip.open(sys.argv[1], "rt")))
n = int(sys.argv[2]) if len(sys.argv) > 2 else 25
hdr = rows[1]
data = [dict(zip(hdr, r)) for r in rows[2:] if len(r) == len(hdr)]
reasons = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
num = lambda s: float(s.replace(",", "")) if s not in ("", "-") else 0.0
tot = sum(num(d["Warp Stall Sampling (All Samples)"]) for d in data)
by = collections.Counter()
for d in data:
    for r in reasons:
        by[r] += num(d[r])
print(f"{len(data)} instructions, {tot:.0f} samples; by reason: " + ", ".join(f"{r[6:]} {100*v/tot:.1f}%" for r, v in by.most_common(8)))
for i, d in sorted(enumerate(data), key=lambda x: -num(x[1]["Warp Stall Sampling (All Samples)"]))[:n]:
    s = num(d["Warp Stall Sampling (All Samples)"])
    top = sorted(((num(d[r]), r[6:]) for r in reasons), reverse=True)[:3]
    print(f"{i:5d} {100*s/tot:5.1f}% {d['Source'].strip()[:60]:60s} exec {d['Instructions Executed']:>8s}  " + ", ".join(f"{r} {100*v/tot:.1f}" for v, r in top if v))

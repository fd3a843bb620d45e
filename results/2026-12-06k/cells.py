#!/usr/bin/env python3
"""cells.py LAUNCHES NCU_CSV: join bench2 --launch-once's launch table with
ncu's CSV (scripts/ncu.sh with NCU_LOG) and print one markdown row a cell:
the k-th profiled kernel is the k-th row of the variants whose kernels the
regex matched (VARIANTS below)."""
import csv, gzip, re, sys

VARIANTS = {"wp3pdl": "wp3", "wpspdl": "wps"}
STALLS = ["long_scoreboard", "short_scoreboard", "barrier", "wait", "math_pipe_throttle", "lg_throttle",
          "mio_throttle", "membar", "no_instruction", "not_selected", "dispatch_stall", "branch_resolving"]

rows = []
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 7 and f[0].isdigit() and f[5] in VARIANTS:
        if not f[6].startswith("PASS"):
            sys.exit(f"launch {f[0]} did not pass its check: {line.strip()}")
        rows.append((f[2], int(f[3]), f[5]))

metrics = {}  # ID -> name -> value
names = {}
opener = gzip.open if sys.argv[2].endswith('.gz') else open
lines = [l for l in opener(sys.argv[2], 'rt') if l.startswith('"')]
for r in csv.DictReader(lines):
    i = int(r["ID"])
    names[i] = r["Kernel Name"]
    v = r["Metric Value"].replace(",", "")
    try:
        val = float(v)
        if r["Metric Name"] == "gpu__time_duration.sum":  # to µs, whatever unit ncu chose
            val *= {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}[r["Metric Unit"]]
        metrics.setdefault(i, {})[r["Metric Name"]] = val
    except ValueError:
        pass
ids = sorted(metrics)
if len(ids) != len(rows):
    sys.exit(f"{len(ids)} profiled kernels, {len(rows)} launch rows of {sorted(VARIANTS)}")

print("| shape | M | body | kernel | µs (ncu) | DRAM % of peak | L2 % of peak | L2 reads by SMs MB | issue active % | warps active % | tensor pipe % | top stalls (warps a issued instruction) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for (shape, m, v), i in zip(rows, ids):
    k, x = names[i], metrics[i]
    body = VARIANTS[v]
    if body not in k:
        sys.exit(f"ID {i} is {k}, row says {v}")
    def g(n, scale=1.0):
        return x.get(n, float("nan")) * scale
    t = g("gpu__time_duration.sum")
    st = sorted(((x.get(f"smsp__average_warps_issue_stalled_{s}_per_issue_active.ratio", 0), s) for s in STALLS), reverse=True)[:4]
    print(f"| {shape} | {m} | {body} | {re.sub(r'^pq_gemm_dec_', '', k)} | {t:.2f} | {g('dram__throughput.avg.pct_of_peak_sustained_elapsed'):.1f} | "
          f"{g('lts__throughput.avg.pct_of_peak_sustained_elapsed'):.1f} | {g('lts__t_sectors_srcunit_tex_op_read.sum') * 32e-6:.1f} | "
          f"{g('smsp__issue_active.avg.pct_of_peak_sustained_active'):.1f} | {g('sm__warps_active.avg.pct_of_peak_sustained_active'):.1f} | "
          f"{g('sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active'):.1f} | "
          + ", ".join(f"{s} {val:.2f}" for val, s in st) + " |")

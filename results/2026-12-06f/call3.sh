#!/usr/bin/env bash
# call3: racecheck on a minimal async-copy ring (racecheck-probe/probe.cu),
# the protocol of the wp/wp3/wps kernels, to tell a tool limitation from a
# race. Prediction: modes 0 (cp.async.bulk) and 1 (cp.async) print OK and
# racecheck reports hazards anyway (a public note from flash-attention
# describes the cp.async.bulk case); mode 2 (st.shared + mbarrier) is clean
# if racecheck models the mbarrier hand-off; mode 3 (no wait, since
# removed from probe.cu: it hung) is flagged. Then memcheck on modes 0-2
# (not reached). Run from the repository root.
set -u
O=${OUT:?}
D=results/2026-12-06f/racecheck-probe
nvcc -arch=sm_90a -O2 -o /tmp/probe $D/probe.cu >"$O/nvcc.txt" 2>&1 || { cat "$O/nvcc.txt"; exit 1; }
compute-sanitizer --version >"$O/version.txt" 2>&1
for m in 0 1 2 3; do
	timeout 60 /tmp/probe $m >"$O/plain-$m.txt" 2>&1
	echo "plain mode $m rc=$?" >>"$O/steps.txt"
	timeout 120 compute-sanitizer --tool racecheck --racecheck-report all /tmp/probe $m >"$O/racecheck-$m.txt" 2>&1
	echo "racecheck mode $m rc=$?" >>"$O/steps.txt"
done
for m in 0 1 2; do
	timeout 60 compute-sanitizer --tool memcheck /tmp/probe $m >"$O/memcheck-$m.txt" 2>&1
	echo "memcheck mode $m rc=$?" >>"$O/steps.txt"
done
cat "$O/steps.txt"; tail -n 3 "$O"/racecheck-*.txt

#!/usr/bin/env bash
# call5: what limits the landed bodies where the body law serves them
# (issue 17's "what limits the rest"): ncu (--clock-control none, one
# launch, SpeedOfLight, WarpStateStats, Occupancy) of wps on gate_up at
# M = 1, 16, 64 and of wp3 on down at M = 1. Run from the repository root
# with build/ and build-alt/ carried.
set -u
O=${OUT:?}
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness.gz >$P && chmod +x $P
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$O/steps.txt"; }
for e in gateup:1:wps_m8:wpspdl gateup:16:wps_m16:wpspdl gateup:64:wps_m64:wpspdl down:1:wp3_m8:wp3pdl; do
	[ $((SECONDS - start)) -lt 170 ] || break
	IFS=: read -r sh m k v <<<"$e"
	timeout 45 ncu --clock-control none --target-processes all -k "regex:^pq_gemm_dec_${k}\$" --launch-count 1 \
		--section SpeedOfLight --section WarpStateStats --section Occupancy \
		$P bench2 dec --shapes results/2026-12-06f/shapes-$sh.txt --m $m --variants $v --reps 4 --regimes stream \
		--warmup 50ms --allow-profiler >"$O/ncu-$sh-m$m-$k.txt" 2>&1
	step "ncu $sh m$m $k rc=$?"
done
cat "$O/steps.txt"

#!/usr/bin/env bash
# Call 4 of 2026-12-06k: the DWP_EPI_LAST trial (gemm.hip, -DDWP_EPI_LAST=1,
# build-trial/) against the landed build (ecf1bbc1, build/). Call 2 put
# 6.8% of wps's stall samples at the consumers' barrier at a segment's
# end (qkv M = 1), and results/2026-12-06i's --max-grid 112 probe put
# the stream-K split's cost near 20% on qkv. Consumer 0 does every
# segment's epilogue (the in-block sum, the hand-off) and, for 2 of 3
# segment ends, owns the very next round, which waits for the hand-off
# while the ring fills. The trial gives the epilogue to the consumer that
# ran the segment's last round (next round C rounds away); the sum's order
# and so the bits are the same. Predicted: wpspdl -1..-4% where wps has
# segment ends before its last (gate_up at every M, down at M = 64),
# wp3pdl unchanged (its code is unchanged).
# Steps: ptxas -v of the trial; the A/B, builds rotating, two runs each
# (bench2 dec --build B --m 1,64 --variants wp3pdl,wpspdl,cublaslt);
# then the gemm gate on the trial in the time left (405 s of device
# time were left: too little for its memcheck form). Build: make kernels; the trial PTX gzipped to
# build-alt/trial.ptx.gz; the binary gzipped to build-alt/parharness.gz;
# carry build/ and build-alt/.
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness.gz >$P && chmod +x $P
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/call4.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv >"$W/smi.txt" 2>&1
rm -rf build-trial && cp -r build build-trial && gzip -dc build-alt/trial.ptx.gz >build-trial/sm_90a/gemm.ptx
md5sum build/sm_90a/gemm.ptx build-trial/sm_90a/gemm.ptx >"$W/md5.txt"
timeout 40 ptxas -arch=sm_90a -v -o /tmp/t.cubin build-trial/sm_90a/gemm.ptx >"$W/ptxas-trial.txt" 2>&1
step "ptxas trial rc=$?"
i=0
for b in build-trial build build-trial build; do
	i=$((i + 1))
	timeout 45 $P bench2 dec --build $b --m 1,64 --variants wp3pdl,wpspdl,cublaslt --reps 4 --regimes stream --watchdog 20s \
		--json "$W/ab-$i-$b.json" >"$W/ab-$i-$b.log" 2>&1
	step "ab $i $b rc=$?"
done
left=$((290 - (SECONDS - start)))
timeout $left $P gate --quick --only '^gemm$' --build build-trial --require-device --watchdog 200s \
	--json "$W/gate-gemm.json" >"$W/gate-gemm.log" 2>&1
step "gate gemm trial rc=$? (limit ${left}s)"

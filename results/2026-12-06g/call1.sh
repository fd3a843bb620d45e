#!/usr/bin/env bash
# Call 1: the DWPS_DEFER trial, then the final scrub check version.
# Hypothesis: wps loses to wp3 on qkv, in_proj and down (+30%, +30%, +10%
# at M = 1) because a block of two shared segments stalls its first
# consumer warpgroup on a gpu fence and a counter atomic between the
# segments (the memory system saturated by the weight stream), and pays
# a second fence at its end. The trial stores the first partial without
# publishing it and publishes both after the last round behind one fence.
# Predicted: wps on qkv, in_proj and down 8-15% faster at every M if the
# stall is the cost, within +-2% if the ring's nine stages absorb it;
# gate_up (blocks of three segments or more, not deferred) within +-1%.
# Steps: ptxas -v of the trial, the gemm gate under memcheck on it with
# wps instrumented, then default and trial alternating.
# Run from the repository root with build/ and build-alt/ carried
# (bash results/2026-12-06f/planned/make-alt-defer.sh first).
set -u
O=${OUT:?}
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness.gz >$P && chmod +x $P
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$O/steps.txt"; }
nvidia-smi --query-gpu=name,driver_version --format=csv >"$O/smi.txt" 2>&1
rm -rf build-defer && cp -r build build-defer && gzip -dc build-alt/defer.ptx.gz >build-defer/sm_90a/gemm.ptx
md5sum build/sm_90a/gemm.ptx build-defer/sm_90a/gemm.ptx >"$O/md5.txt"
timeout 60 ptxas -arch=sm_90a -v -o /tmp/d.cubin build-defer/sm_90a/gemm.ptx >"$O/ptxas-defer.txt" 2>&1
step "ptxas rc=$?"
timeout 240 compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wps \
	$P gate --quick --only '^gemm$' --build build-defer --require-device --watchdog 220s >"$O/memcheck-defer.log" 2>&1
step "memcheck defer rc=$?"
i=0
for b in build build-defer build build-defer; do
	i=$((i + 1))
	timeout 45 $P bench2 dec --build $b --m 1,16,56,64 --variants wp3pdl,wpsS3,wpspdl,cublaslt --reps 4 --regimes stream \
		--watchdog 20s --json "$O/ab-$i-$b.json" >"$O/ab-$i-$b.log" 2>&1
	step "ab $i $b rc=$?"
done
# The scrub check as landed (LLC/4 probe, hot arm behind four copies): one
# isolated run on the default build.
timeout 120 $P bench2 dec --build build --m 1,8 --variants wp3pdl,wpspdl,cublaslt --reps 4 --regimes stream,isolated \
	--watchdog 20s --json "$O/iso.json" >"$O/iso.log" 2>&1
step "iso rc=$?"

#!/usr/bin/env bash
# Call 1: two stream-K hand-off trials against the default build, and the
# landed scrub check on a device.
# DWPS_DEFER (wps only): a block of two shared segments stores its first
# partial unpublished and publishes both tiles after its last round behind
# one fence. Hypothesis: wps loses to wp3 on qkv, in_proj and down (+30%,
# +30%, +10% at M = 1) because the first segment's hand-off (a gpu fence
# in every consumer thread, a counter atomic) stalls the consumers between
# segments. Predicted: wps there 8-15% faster at every M if the stall is
# the cost, within +-2% if the ring's stages absorb it; gate_up (not
# deferred) within +-1%.
# DSK_RELEASE (wks and wps): the counter atomic itself releases (acq_rel,
# thread 0, after the warpgroup's barrier) instead of a fence in every
# thread; no fence before the gather. The formally complete form of the
# hand-off. Predicted: within +-2% (one fence on the path either way).
# Steps: ptxas -v of both trials; default, defer and release alternating
# (two runs each, stream, M = 1, 16, 56, 64); one run of both regimes on
# the default build at M <= 8 with the read roof (the scrub check's landed
# form: LLC/4 probe, hot arm behind four copies). Predicted: the roof's
# isolated fraction of copy below 75% at M <= 8 on qkv, in_proj and down
# (about 3 us of fixed cost on 10-22 MB), its stream fraction near the
# kernels' 74-80%; the gemm gate under memcheck on the defer build with
# wps instrumented. Run from the repository root with build/ and
# build-alt/ carried (bash results/2026-12-06g/make-alt.sh first).
set -u
O=${OUT:?}
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness.gz >$P && chmod +x $P
start=$SECONDS
left() { [ $((SECONDS - start)) -lt "$1" ]; }
step() { echo "$((SECONDS - start))s $*" >>"$O/steps.txt"; }
nvidia-smi --query-gpu=name,driver_version --format=csv >"$O/smi.txt" 2>&1
for t in defer release; do
	rm -rf build-$t && cp -r build build-$t && gzip -dc build-alt/$t.ptx.gz >build-$t/sm_90a/gemm.ptx
	timeout 60 ptxas -arch=sm_90a -v -o /tmp/$t.cubin build-$t/sm_90a/gemm.ptx >"$O/ptxas-$t.txt" 2>&1
	step "ptxas $t rc=$?"
done
md5sum build*/sm_90a/gemm.ptx >"$O/md5.txt"
i=0
for b in build build-defer build-release build build-defer build-release; do
	i=$((i + 1))
	timeout 45 $P bench2 dec --build $b --m 1,16,56,64 --variants wp3pdl,wpsS3,wpspdl,wksS4,cublaslt --reps 4 --regimes stream \
		--watchdog 20s --json "$O/ab-$i-$b.json" >"$O/ab-$i-$b.log" 2>&1
	step "ab $i $b rc=$?"
done
timeout 120 $P bench2 dec --build build --m 1,2,5,8 --variants wp3pdl,wpspdl,cublaslt,read --reps 4 --regimes stream,isolated \
	--watchdog 20s --json "$O/iso.json" >"$O/iso.log" 2>&1
step "iso rc=$?"
left 330 && timeout 240 compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wps \
	$P gate --quick --only '^gemm$' --build build-defer --require-device --watchdog 220s >"$O/memcheck-defer.log" 2>&1
step "memcheck defer rc=$?"

#!/usr/bin/env bash
# The next session's first call (planned, not run): the DWPS_OPAQUE trial.
# Static evidence (this session, PTX only): wps_m64's consumer segment
# loop had 93 values live in from before it (56 of them 64-bit: the red
# and ws words' addresses, the output rows), 29 (6) with the trial.
# Predicted: ptxas shows no stack in any wps kernel (wps_m64: 80 bytes
# now); wps within +-1% at M <= 56 and within +-2% at M = 64 (the
# epilogue runs a few times a block). Steps: ptxas -v of the trial, the
# gemm gate under memcheck on it with wps instrumented, then default and
# trial alternating. Ask for an H200 and record which card came.
# Run from the repository root with bin/, build/ and build-alt/ carried
# (bash results/2026-12-06e/planned/make-alt-opaque.sh first).
set -u
O=${OUT:?}
P=bin/parharness
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$O/steps.txt"; }
nvidia-smi --query-gpu=name,driver_version --format=csv >"$O/smi.txt" 2>&1
rm -rf build-opaque && cp -r build build-opaque && gzip -dc build-alt/opaque.ptx.gz >build-opaque/sm_90a/gemm.ptx
timeout 60 ptxas -arch=sm_90a -v -o /tmp/o.cubin build-opaque/sm_90a/gemm.ptx >"$O/ptxas-opaque.txt" 2>&1
step "ptxas rc=$?"
timeout 240 compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wps \
	$P gate --quick --only '^gemm$' --build build-opaque --require-device --watchdog 220s >"$O/memcheck-opaque.log" 2>&1
step "memcheck opaque rc=$?"
i=0
for b in build build-opaque build build-opaque; do
	i=$((i + 1))
	timeout 40 $P bench2 dec --build $b --m 1,16,56,64 --variants wp3pdl,wpsS3,wpspdl,cublaslt --reps 4 --regimes stream \
		--watchdog 20s --json "$O/ab-$i-$b.json" >/dev/null 2>&1
	step "ab $i $b rc=$?"
done

#!/usr/bin/env bash
# Device call 4 (2026-12-06): the stream-K wks kernels. In order, each
# step bounded so the call ends within 600 s: ptxas -v of gemm.ptx (the
# registers and spills of every gemm kernel); bench2 dec at M = 1, 8,
# 16, 64 with wk1 at S = 1 and 4, wks at S = 1..4 and cuBLASLt fp8; the gemm quick
# gate; memcheck of the wks kernels under the gemm gate. Everything lands in
# one tarball ($OUT keeps at most 8 files). Run from the repository root
# with bin/ and build/ carried.
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
left() { [ $((SECONDS - start)) -lt "$1" ]; }
finish() { tar -czf "$O/call4.tar.gz" -C "$W" . ; cat "$W/steps.txt"; }
trap finish EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$W/smi.txt" 2>&1
timeout 60 ptxas -arch=sm_90a -v -o "$W/g.cubin" build/sm_90a/gemm.ptx >"$W/ptxas.txt" 2>&1
step "ptxas rc=$?"
rm -f "$W/g.cubin"
timeout 120 $P bench2 dec --m 1,8,16,64 --variants wk1S1,wk1S4,wksS1,wksS2,wksS3,wksS4,cublaslt --reps 4 --regimes stream \
	--watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
step "dec rc=$?"
left 330 && timeout 270 $P gate --quick --only '^gemm$' --require-device --watchdog 60s --json "$W/gate-gemm.json" >"$W/gate-gemm.log" 2>&1
step "gate gemm rc=$?"
left 480 && timeout $((570 - (SECONDS - start))) compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wks \
	$P gate --quick --only '^gemm$' --require-device --watchdog 120s >"$W/memcheck-wks.log" 2>&1
step "memcheck rc=$?"

#!/usr/bin/env bash
# Device call 2 (2026-12-06, twentieth session): the wp kernels after the
# consumer-loop restructuring. bench2 dec (wk1 at S = 1 and 4, wp, cuBLASLt
# fp8; M = 1, 8, 16, 32, 64; stream and isolated) first, then ptxas -v,
# the gemm quick gate, and wp of build-np (DWP_PIPE=0) if time is left.
# One tarball back ($OUT keeps at most 8 files).
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
left() { [ $((SECONDS - start)) -lt "$1" ]; }
finish() { tar -czf "$O/call2.tar.gz" -C "$W" . ; cat "$W/steps.txt"; }
trap finish EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$W/smi.txt" 2>&1
md5sum build/sm_90a/gemm.ptx >"$W/md5.txt"
(timeout 60 ptxas -arch=sm_90a -v -o "$W/g.cubin" build/sm_90a/gemm.ptx >"$W/ptxas.txt" 2>&1
 cuobjdump -sass -fun pq_gemm_dec_wp_m64 "$W/g.cubin" >"$W/sass-wp_m64.txt" 2>&1; rm -f "$W/g.cubin") &
timeout 100 $P bench2 dec --m 1,8,16,32,64 --variants wk1S1,wk1S4,wpS2,cublaslt --reps 4 \
	--regimes stream,isolated --watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
step "dec rc=$?"
wait
step "ptxas"
timeout $((200 - (SECONDS - start))) $P gate --quick --only '^gemm$' --require-device --watchdog 30s --json "$W/gate-gemm.json" >"$W/gate-gemm.log" 2>&1
step "gate gemm rc=$?"
if left 170; then
	rm -rf build-np && cp -r build build-np && gzip -dc build-alt/nopipe.ptx.gz >build-np/sm_90a/gemm.ptx
	timeout 30 $P bench2 dec --build build-np --m 1,16,64 --variants wpS2,cublaslt --reps 4 --regimes stream \
		--watchdog 30s --json "$W/dec-np.json" >"$W/dec-np.log" 2>&1
	step "dec np rc=$?"
fi

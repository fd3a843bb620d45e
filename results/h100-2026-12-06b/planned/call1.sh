#!/usr/bin/env bash
# Device call 1 (2026-12-06, twentieth session): the warp-specialized
# decode kernels (wp) against wk1 and cuBLASLt fp8. ptxas -v on the build
# (wp folds the previous round while the next one's ops run: wait_group 1)
# and on build-np (DWP_PIPE=0: each round waits for its own ops); the gemm
# quick gate; bench2 dec at M = 1, 16, 64 (stream); wp of build-np at the
# same M; memcheck of the wp kernels if time is left. One tarball back ($OUT keeps at most 8 files).
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
left() { [ $((SECONDS - start)) -lt "$1" ]; }
finish() { tar -czf "$O/call1.tar.gz" -C "$W" . ; cat "$W/steps.txt"; }
trap finish EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$W/smi.txt" 2>&1
rm -rf build-np && cp -r build build-np && gzip -dc build-alt/nopipe.ptx.gz >build-np/sm_90a/gemm.ptx
md5sum build/sm_90a/gemm.ptx build-np/sm_90a/gemm.ptx >"$W/md5.txt"
for v in build build-np; do
	(timeout 120 ptxas -arch=sm_90a -v -o "$W/$v.cubin" "$v/sm_90a/gemm.ptx" >"$W/ptxas-$v.txt" 2>&1
	 cuobjdump -sass -fun pq_gemm_dec_wp_m64 "$W/$v.cubin" >"$W/sass-$v-wp_m64.txt" 2>&1; rm -f "$W/$v.cubin") &
done
wait
step "ptxas"
timeout 180 $P gate --quick --only '^gemm$' --require-device --watchdog 30s --json "$W/gate-gemm.json" >"$W/gate-gemm.log" 2>&1
step "gate gemm rc=$?"
timeout 90 $P bench2 dec --m 1,16,64 --variants wk1S1,wk1S4,wpS2,wppdl,cublaslt --reps 4 \
	--regimes stream --watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
step "dec rc=$?"
left 300 && timeout 40 $P bench2 dec --build build-np --m 1,16,64 --variants wpS2,cublaslt --reps 4 --regimes stream \
	--watchdog 30s --json "$W/dec-np.json" >"$W/dec-np.log" 2>&1
step "dec np rc=$?"
left 250 && timeout $((330 - (SECONDS - start))) compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wp \
	$P gate --quick --only '^gemm$' --require-device --watchdog 120s >"$W/memcheck-wp.log" 2>&1
step "memcheck rc=$?"

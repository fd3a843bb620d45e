#!/usr/bin/env bash
# The device call that decides whether wp (branch wp-kernels) lands: run
# from the repository root with bin/, build/ and build-alt/ carried
# (planned/make-alt.sh builds build-alt/: DWP_PIPE=0 and DWP_STAGES=4). In order of need:
# ptxas -v on the build (its output becomes gates/testdata/ptxas/clean.txt
# if clean) with the wp_m64 SASS; the static device gates (ptxas-sm90a,
# sass-wgmma-hazards); bench2 dec at M = 1, 2, 5, 8 and every 8 to 64 with
# wk1 at S = 1 and 4, wp, wppdl and cuBLASLt fp8 in both regimes (on an
# H200 that is also issue 17's acceptance sweep); the gemm quick gate;
# wp of the two trial builds at M = 1, 16, 64; memcheck of the wp kernels.
# One tarball back ($OUT keeps at most 8 files).
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
left() { [ $((SECONDS - start)) -lt "$1" ]; }
finish() { tar -czf "$O/merge-call.tar.gz" -C "$W" . ; cat "$W/steps.txt"; }
trap finish EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$W/smi.txt" 2>&1
md5sum build/sm_90a/gemm.ptx >"$W/md5.txt"
(timeout 60 ptxas -arch=sm_90a -v -o "$W/g.cubin" build/sm_90a/gemm.ptx >"$W/ptxas.txt" 2>&1
 cuobjdump -sass -fun pq_gemm_dec_wp_m64 "$W/g.cubin" >"$W/sass-wp_m64.txt" 2>&1; rm -f "$W/g.cubin") &
timeout 160 $P bench2 dec --m 1,2,5,8,16,24,32,40,48,56,64 --variants wk1S1,wk1S4,wpS2,wppdl,cublaslt --reps 4 \
	--regimes stream,isolated --watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
step "dec rc=$?"
wait
step "ptxas"
timeout 60 $P gate --quick --only '^(ptxas-sm90a|sass-wgmma-hazards)$' --require-device --json "$W/gate-static.json" >"$W/gate-static.log" 2>&1
step "gate static rc=$?"
timeout $((400 - (SECONDS - start))) $P gate --quick --only '^gemm$' --require-device --watchdog 30s --json "$W/gate-gemm.json" >"$W/gate-gemm.log" 2>&1
step "gate gemm rc=$?"
for v in nopipe d4; do # the trial builds (planned/make-alt.sh)
	left 430 || break
	rm -rf "build-$v" && cp -r build "build-$v" && gzip -dc "build-alt/$v.ptx.gz" >"build-$v/sm_90a/gemm.ptx"
	timeout 30 $P bench2 dec --build "build-$v" --m 1,16,64 --variants wpS2,cublaslt --reps 4 --regimes stream \
		--watchdog 30s --json "$W/dec-$v.json" >"$W/dec-$v.log" 2>&1
	step "dec $v rc=$?"
done
left 450 && timeout $((580 - (SECONDS - start))) compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wp \
	$P gate --quick --only '^gemm$' --require-device --watchdog 120s >"$W/memcheck-wp.log" 2>&1
step "memcheck rc=$?"

#!/usr/bin/env bash
# wp3 (branch wp3): three consumer warpgroups. ptxas -v and the wp3_m64
# SASS, bench2 dec with wk1, wp and wp3 in both launch modes beside
# cuBLASLt fp8 (both regimes), the static device gates, the gemm gate under
# memcheck (wp3 kernels instrumented), ncu of wp3 at M = 1 and 64 on qkv.
# The wk fence attribution builds (planned/make-alt.sh) at M = 1, 16, 64.
# Run from the repository root with bin/, build/ and build-alt/ carried.
# One tarball back.
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/wp3-call.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$W/smi.txt" 2>&1
md5sum build/sm_90a/gemm.ptx >"$W/md5.txt"
(timeout 60 ptxas -arch=sm_90a -v -o "$W/g.cubin" build/sm_90a/gemm.ptx >"$W/ptxas.txt" 2>&1
 cuobjdump -sass -fun pq_gemm_dec_wp3_m64 "$W/g.cubin" >"$W/sass-wp3_m64.txt" 2>&1; rm -f "$W/g.cubin") &
timeout 150 $P bench2 dec --m 1,2,5,8,16,24,32,40,48,56,64 --variants wk1S1,wk1S4,wk1pdl,wpS2,wppdl,wp3S3,wp3pdl,cublaslt --reps 4 \
	--regimes stream,isolated --watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
step "dec rc=$?"
wait
step "ptxas"
timeout 60 $P gate --quick --only '^(ptxas-sm90a|sass-wgmma-hazards)$' --require-device --json "$W/gate-static.json" >"$W/gate-static.log" 2>&1
step "gate static rc=$?"
timeout 200 compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wp3 \
	$P gate --quick --only '^gemm$' --require-device --watchdog 120s --json "$W/gate-gemm.json" >"$W/memcheck-gemm.log" 2>&1
step "memcheck gemm rc=$?"
for v in fence2 fence0; do # the wk fence attribution builds (planned/make-alt.sh); bench2 checks each output before timing it
	[ $((SECONDS - start)) -lt 420 ] || break
	rm -rf "build-$v" && cp -r build "build-$v" && gzip -dc "build-alt/$v.ptx.gz" >"build-$v/sm_90a/gemm.ptx"
	timeout 60 $P bench2 dec --build "build-$v" --m 1,16,64 --variants wk1S1,wk1S4,cublaslt --reps 4 --regimes stream \
		--watchdog 30s --json "$W/dec-$v.json" >"$W/dec-$v.log" 2>&1
	step "dec $v rc=$?"
done
export NCU_METRICS=sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.max,smsp__inst_executed.sum
for e in 1:wp3_m8 64:wp3_m64; do
	[ $((SECONDS - start)) -lt 500 ] || break
	timeout 60 scripts/ncu.sh "^pq_gemm_dec_${e#*:}\$" bench2 dec --shapes results/h100-2026-12-06b/planned/shapes-qkv.txt \
		--m "${e%%:*}" --variants wp3S3 --reps 4 --regimes stream --warmup 50ms --allow-profiler >"$W/ncu-qkv-${e#*:}.txt" 2>&1
	step "ncu $e rc=$?"
done

#!/usr/bin/env bash
# call4: the wp copiers' fixed-piece loop (branch wpcopy). ptxas -v (the
# producer at 56 registers must not spill), the static device gates, then
# A/B against the index loop it replaced (make-alt3.sh), alternating new,
# old, new, old, stream regime; the gemm gate under memcheck with the wp
# and wp3 kernels instrumented; ncu per-instruction samples of wp3_m64;
# and, if time is left, the full sweep of the new build in both regimes.
# Run from the repository root with bin/, build/ and build-alt/ carried.
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/call4.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$W/smi.txt" 2>&1
rm -rf build-old && cp -r build build-old && gzip -dc build-alt/index.ptx.gz >build-old/sm_90a/gemm.ptx
md5sum build/sm_90a/gemm.ptx build-old/sm_90a/gemm.ptx >"$W/md5.txt"
timeout 60 ptxas -arch=sm_90a -v -o "$W/g.cubin" build/sm_90a/gemm.ptx >"$W/ptxas.txt" 2>&1
step "ptxas rc=$?"
cuobjdump -sass -fun pq_gemm_dec_wp3_m64 "$W/g.cubin" >"$W/sass-wp3_m64.txt" 2>&1; rm -f "$W/g.cubin"
timeout 60 $P gate --quick --only '^(ptxas-sm90a|sass-wgmma-hazards)$' --require-device --json "$W/gate-static.json" >"$W/gate-static.log" 2>&1
step "gate static rc=$?"
i=0
for b in build build-old build build-old; do
	i=$((i + 1))
	timeout 60 $P bench2 dec --build $b --m 1,8,16,32,64 --variants wk1pdl,wpS2,wppdl,wp3S3,wp3pdl,cublaslt --reps 4 --regimes stream \
		--watchdog 30s --json "$W/ab-$i-$b.json" >"$W/ab-$i-$b.log" 2>&1
	step "ab $i $b rc=$?"
done
timeout 240 compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wp \
	$P gate --quick --only '^gemm$' --require-device --watchdog 200s --json "$W/gate-gemm.json" >"$W/memcheck-gemm.log" 2>&1
step "memcheck gemm rc=$?"
S=results/h100-2026-12-06b/planned/shapes-qkv.txt
timeout 60 ncu --clock-control none --target-processes all -k "regex:^pq_gemm_dec_wp3_m64\$" --launch-count 1 \
	--section SourceCounters --section WarpStateStats --section SpeedOfLight -o "$W/wp3_m64" \
	$P bench2 dec --shapes $S --m 64 --variants wp3S3 --reps 4 --regimes stream --warmup 50ms --allow-profiler >"$W/ncu-wp3_m64.log" 2>&1
step "ncu rc=$?"
ncu --import "$W/wp3_m64.ncu-rep" --page source --csv --print-source sass 2>&1 | gzip -9 >"$W/src-wp3_m64.csv.gz"
ncu --import "$W/wp3_m64.ncu-rep" --page details >"$W/details-wp3_m64.txt" 2>&1
rm -f "$W/wp3_m64.ncu-rep"
if [ $((SECONDS - start)) -lt 440 ]; then
	timeout 150 $P bench2 dec --m 1,2,5,8,16,24,32,40,48,56,64 --variants wk1S1,wk1S4,wk1pdl,wpS2,wppdl,wp3S3,wp3pdl,cublaslt --reps 4 \
		--regimes stream,isolated --watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
	step "dec rc=$?"
fi

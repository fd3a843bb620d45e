#!/usr/bin/env bash
# call1 (twenty-third session): the landed build (gemm.ptx md5 3ef97b8a)
# gemm gate under memcheck with the wp and wp3 kernels instrumented; the
# DWP3_PIPE trial (ptxas -v; default and trial alternating at M = 1, 16,
# 32, 64, stream); the acceptance sweep with every wk1 split in both
# regimes; ncu per M class of wp3 on qkv. Asked for an H200.
# Prediction for DWP3_PIPE: -10..20% at M = 32..64, M <= 8 unchanged.
# Run from the repository root with bin/, build/ and build-alt/ carried.
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/call1.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$W/smi.txt" 2>&1
rm -rf build-pipe3 && cp -r build build-pipe3 && gzip -dc build-alt/pipe3.ptx.gz >build-pipe3/sm_90a/gemm.ptx
md5sum build/sm_90a/gemm.ptx build-pipe3/sm_90a/gemm.ptx >"$W/md5.txt"
timeout 60 ptxas -arch=sm_90a -v -o /tmp/p.cubin build-pipe3/sm_90a/gemm.ptx >"$W/ptxas-pipe3.txt" 2>&1
step "ptxas pipe3 rc=$?"
timeout 240 compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wp \
	$P gate --quick --only '^gemm$' --require-device --watchdog 220s --json "$W/gate-gemm.json" >"$W/memcheck-gemm.log" 2>&1
step "memcheck gemm rc=$?"
i=0
for b in build build-pipe3 build build-pipe3; do
	i=$((i + 1))
	timeout 50 $P bench2 dec --build $b --m 1,16,32,64 --variants wp3S3,wp3pdl,cublaslt --reps 4 --regimes stream \
		--watchdog 30s --json "$W/ab-$i-$b.json" >"$W/ab-$i-$b.log" 2>&1
	step "ab $i $b rc=$?"
done
timeout 150 $P bench2 dec --m 1,2,5,8,16,24,32,40,48,56,64 \
	--variants wk1S1,wk1S2,wk1S3,wk1S4,wk1pdl,wpS2,wppdl,wp3S3,wp3pdl,cublaslt --reps 4 \
	--regimes stream,isolated --watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
step "dec rc=$?"
S=results/h100-2026-12-06b/planned/shapes-qkv.txt
for e in 1:wp3_m8 16:wp3_m16 32:wp3_m32 64:wp3_m64; do
	[ $((SECONDS - start)) -lt 545 ] || break
	IFS=: read -r m k <<<"$e"
	timeout 40 ncu --clock-control none --target-processes all -k "regex:^pq_gemm_dec_${k}\$" --launch-count 1 \
		--section SpeedOfLight --section WarpStateStats --section Occupancy \
		$P bench2 dec --shapes $S --m $m --variants wp3pdl --reps 4 --regimes stream --warmup 50ms --allow-profiler >"$W/ncu-m$m-$k.txt" 2>&1
	step "ncu m$m $k rc=$?"
done

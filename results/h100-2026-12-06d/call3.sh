#!/usr/bin/env bash
# call3: the acceptance sweep of the landed build (wp3 merged; gemm.ptx md5
# 258f4fba, as call1) and the ncu limiter figures per M class.
# bench2 dec at M = 1, 2, 5, 8, 16, ..., 64, every wk1 split (its regret
# table), wk1 under PDL, wp, wp3 and cuBLASLt fp8, both regimes; then ncu
# (SpeedOfLight, WarpStateStats, --clock-control none) of the kernel the
# qkv problem's best variant runs at M = 1, 8, 16, 32, 64.
# Run from the repository root with bin/ and build/ carried.
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/call3.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$W/smi.txt" 2>&1
md5sum build/sm_90a/gemm.ptx >"$W/md5.txt"
timeout 300 $P bench2 dec --m 1,2,5,8,16,24,32,40,48,56,64 \
	--variants wk1S1,wk1S2,wk1S3,wk1S4,wk1pdl,wpS2,wppdl,wp3S3,wp3pdl,cublaslt --reps 4 \
	--regimes stream,isolated --watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
step "dec rc=$?"
S=results/h100-2026-12-06b/planned/shapes-qkv.txt
for e in 1:wp3_m8:wp3pdl 8:wp3_m8:wp3pdl 1:wk1_m8:wk1pdl 16:wk1_m16:wk1pdl 32:wk1_m32:wk1pdl 64:wk1_m64:wk1pdl; do
	[ $((SECONDS - start)) -lt 500 ] || break
	IFS=: read -r m k v <<<"$e"
	timeout 60 ncu --clock-control none --target-processes all -k "regex:^pq_gemm_dec_${k}\$" --launch-count 1 \
		--section SpeedOfLight --section WarpStateStats --section Occupancy \
		$P bench2 dec --shapes $S --m $m --variants $v --reps 4 --regimes stream --warmup 50ms --allow-profiler >"$W/ncu-m$m-$k.txt" 2>&1
	step "ncu m$m $k rc=$?"
done

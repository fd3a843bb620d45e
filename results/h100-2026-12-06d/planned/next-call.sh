#!/usr/bin/env bash
# The next session's first call (planned, not run): what the twenty-second
# session's device time did not cover on the landed build (gemm.ptx md5
# 3ef97b8a). The full gemm gate under memcheck with the wp and wp3
# kernels instrumented (call 5's plain gate stopped at its 90 s timeout),
# then the acceptance sweep with every wk1 split and ncu per M class; ask
# for an H200 (issue 17's acceptance names it) and record which card came.
# Run from the repository root with bin/ and build/ carried.
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/next-call.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$W/smi.txt" 2>&1
md5sum build/sm_90a/gemm.ptx >"$W/md5.txt"
timeout 300 compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wp \
	$P gate --quick --only '^gemm$' --require-device --watchdog 250s --json "$W/gate-gemm.json" >"$W/memcheck-gemm.log" 2>&1
step "memcheck gemm rc=$?"
timeout 200 $P bench2 dec --m 1,2,5,8,16,24,32,40,48,56,64 \
	--variants wk1S1,wk1S2,wk1S3,wk1S4,wk1pdl,wpS2,wppdl,wp3S3,wp3pdl,cublaslt --reps 4 \
	--regimes stream,isolated --watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
step "dec rc=$?"
# The limiter figures per M class for the body the law now picks (wp3 on
# qkv's problem), as call 3 took them for wk1 before the copier change.
S=results/h100-2026-12-06b/planned/shapes-qkv.txt
for e in 1:wp3_m8 8:wp3_m8 16:wp3_m16 32:wp3_m32 64:wp3_m64; do
	[ $((SECONDS - start)) -lt 540 ] || break
	IFS=: read -r m k <<<"$e"
	timeout 60 ncu --clock-control none --target-processes all -k "regex:^pq_gemm_dec_${k}\$" --launch-count 1 \
		--section SpeedOfLight --section WarpStateStats --section Occupancy \
		$P bench2 dec --shapes $S --m $m --variants wp3pdl --reps 4 --regimes stream --warmup 50ms --allow-profiler >"$W/ncu-m$m-$k.txt" 2>&1
	step "ncu m$m $k rc=$?"
done

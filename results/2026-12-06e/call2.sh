#!/usr/bin/env bash
# call2: the wps kernels (wp3's body split stream-K over one block an SM)
# and the wp/wp3 bodies rewritten as segment loops. ptxas -v of the new
# build (no stack or spill in any wp kernel), the static gates, the gemm
# gate under memcheck with wps instrumented, racecheck of wps at M = 64
# (the red buffer is reused between a block's segments), then old and new
# builds alternating (wp3's timing must not move; wps against wp3), and
# the full sweep if time is left.
# Prediction (wps against wp3, stream): gate_up M = 64 36.8 -> ~29 us,
# down M = 64 18.6 -> ~16 us, down M = 1 11.0 -> ~9.5 us; qkv and
# in_proj (112 and 128 tiles) within +-5%.
# Run from the repository root with bin/, build/ and build-alt/
# carried (build-alt: main 3a0fa58's gemm.ptx, md5 3ef97b8a, and binary, gzipped).
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
start=$SECONDS
left() { [ $((SECONDS - start)) -lt "$1" ]; }
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/call2.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$W/smi.txt" 2>&1
mkdir -p bin-old && gzip -dc build-alt/parharness-old.gz >bin-old/parharness && chmod +x bin-old/parharness
rm -rf build-old && cp -r build build-old && gzip -dc build-alt/old.ptx.gz >build-old/sm_90a/gemm.ptx
md5sum build/sm_90a/gemm.ptx build-old/sm_90a/gemm.ptx >"$W/md5.txt"
timeout 60 ptxas -arch=sm_90a -v -o /tmp/g.cubin build/sm_90a/gemm.ptx >"$W/ptxas.txt" 2>&1
step "ptxas rc=$?"
timeout 60 $P gate --quick --only '^(ptxas-sm90a|sass-wgmma-hazards)$' --require-device --json "$W/gate-static.json" >"$W/gate-static.log" 2>&1
step "gate static rc=$?"
timeout 270 compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wps \
	$P gate --quick --only '^gemm$' --require-device --watchdog 240s --json "$W/gate-gemm.json" >"$W/memcheck-gemm.log" 2>&1
step "memcheck gemm rc=$?"
timeout 60 compute-sanitizer --tool racecheck --kernel-name kns=pq_gemm_dec_wps \
	$P bench2 dec --m 64 --variants wpsS3 --reps 1 --regimes stream --warmup 10ms --allow-profiler --watchdog 50s >"$W/racecheck-wps.log" 2>&1
step "racecheck wps rc=$?"
i=0
for b in new old new old; do
	i=$((i + 1))
	left 470 || break
	if [ $b = new ]; then
		timeout 50 $P bench2 dec --m 1,8,16,32,64 --variants wp3S3,wp3pdl,wpsS3,wpspdl,cublaslt --reps 4 --regimes stream \
			--watchdog 30s --json "$W/ab-$i-$b.json" >"$W/ab-$i-$b.log" 2>&1
	else
		timeout 50 bin-old/parharness bench2 dec --build build-old --m 1,8,16,32,64 --variants wp3S3,wp3pdl,cublaslt --reps 4 --regimes stream \
			--watchdog 30s --json "$W/ab-$i-$b.json" >"$W/ab-$i-$b.log" 2>&1
	fi
	step "ab $i $b rc=$?"
done
if left 440; then
	timeout $((585 - (SECONDS - start))) $P bench2 dec --m 1,2,5,8,16,24,32,40,48,56,64 \
		--variants wk1S1,wk1S4,wk1pdl,wp3S3,wp3pdl,wpsS3,wpspdl,cublaslt --reps 4 \
		--regimes stream,isolated --watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
	step "dec rc=$?"
fi

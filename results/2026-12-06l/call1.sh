#!/usr/bin/env bash
# Call 1 of 2026-12-06l: gemm_dec_wp without its zero-store prologue
# (build/, gemm.ptx md5 0fa3fad8) against the landed build (ecf1bbc1,
# build-old/ from build-alt/old.ptx.gz).
# Why: the landed body stored zeros into rows M..NB-1 of every stage
# before its first bulk copy, a loop with run-time divisions by NB - M.
# In results/2026-12-06k call 2's SASS samples (qkv M = 1, wp3_m8) that
# loop holds about 40 of 793 samples (5% of the SM-busy time, ~0.3 us),
# and it is why M = 1, 2, 5 run slower than M = 8 (down 11.04 against
# 10.72 us in results/2026-12-06j call 2). Rows >= M never reach the
# output, so the trial drops the stores.
# Predicted: wp3pdl and wpspdl at M = 1 and 5 down to about their M = 8
# time (-2..-3% on down and qkv, about -1% on in_proj), M = 8 unchanged
# (+-0.3%), M = 61 (m64, NB - M = 3) -0..-1%; cuBLASLt unchanged.
# Steps: ptxas -v and the static gates of the trial; the A/B, builds
# rotating, two runs each (bench2 dec --build B --m 1,5,8,61 --variants
# wp3pdl,wpspdl,cublaslt); the gemm gate on the trial under memcheck of
# every wp body (kns=pq_gemm_dec_wp) in the time left.
# Build: make kernels; binary gzipped to build-alt/parharness.gz; carry
# build/ and build-alt/.
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness.gz >$P && chmod +x $P
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/call1.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$W/smi.txt" 2>&1
cat "$W/smi.txt"
rm -rf build-old && cp -r build build-old && gzip -dc build-alt/old.ptx.gz >build-old/sm_90a/gemm.ptx
md5sum build/sm_90a/gemm.ptx build-old/sm_90a/gemm.ptx >"$W/md5.txt"
timeout 40 ptxas -arch=sm_90a -v -o /tmp/t.cubin build/sm_90a/gemm.ptx >"$W/ptxas.txt" 2>&1
step "ptxas rc=$?"
timeout 60 $P gate --quick --only '^(ptxas-sm90a|sass-wgmma-hazards|sync-inventory)$' --require-device --json "$W/gate-static.json" >"$W/gate-static.log" 2>&1
step "gate static rc=$?"
i=0
for b in build build-old build build-old; do
	i=$((i + 1))
	timeout 60 $P bench2 dec --build $b --m 1,5,8,61 --variants wp3pdl,wpspdl,cublaslt --reps 4 --regimes stream --watchdog 20s \
		--json "$W/ab-$i-$b.json" >"$W/ab-$i-$b.log" 2>&1
	step "ab $i $b rc=$?"
done
left=$((540 - (SECONDS - start)))
timeout $left compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wp \
	$P gate --quick --only '^gemm$' --require-device --watchdog 300s --json "$W/gate-gemm-memcheck.json" >"$W/memcheck.log" 2>&1
step "memcheck gate gemm rc=$? (limit ${left}s)"

#!/usr/bin/env bash
# call2: the build to land (wps_m64 computes its epilogue addresses per
# segment; every other function as main's 4950e767) and the scrub check
# with its hot arm queued behind the same copy.
# 1. ptxas -v (no stack or spill in any kernel), the static gates, the
#    plain gemm gate on the whole build.
# 2. The acceptance sweep in both regimes (read scrub). Prediction: the
#    scrub check agrees (hot copy faster by more than the noise, doubled
#    scrub within it); isolated times as in call 1.
# 3. ncu's own cache-flushed duration (--cache-control all, one metric)
#    of wp3_m8 and of cuBLASLt's kernel on down at M = 1, against the
#    isolated regime's events. Prediction: ncu within 1 us below ours
#    (ours includes the launch gap inside the events).
# Run from the repository root with build/ and build-alt/ carried.
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness.gz >$P && chmod +x $P
start=$SECONDS
left() { [ $((SECONDS - start)) -lt "$1" ]; }
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/call2.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$W/smi.txt" 2>&1
md5sum build/sm_90a/gemm.ptx >"$W/md5.txt"
timeout 60 ptxas -arch=sm_90a -v -o /tmp/g.cubin build/sm_90a/gemm.ptx >"$W/ptxas.txt" 2>&1
step "ptxas rc=$?"
timeout 60 $P gate --quick --only '^(ptxas-sm90a|sass-wgmma-hazards)$' --require-device --json "$W/gate-static.json" >"$W/gate-static.log" 2>&1
step "gate static rc=$?"
timeout 230 $P gate --quick --only '^gemm$' --require-device --watchdog 200s --json "$W/gate-gemm.json" >"$W/gate-gemm.log" 2>&1
step "gate gemm rc=$?"
timeout 150 $P bench2 dec --m 1,2,5,8,16,24,32,40,48,56,64 \
	--variants wk1S1,wk1S4,wk1pdl,wp3S3,wp3pdl,wpsS3,wpspdl,cublaslt --reps 4 \
	--regimes stream,isolated --watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
step "dec rc=$?"
S=results/2026-12-06f/shapes-down.txt
for e in wp3:'^pq_gemm_dec_wp3_m8$' cublaslt:'sm90_|cutlass|xmma'; do
	left 540 || break
	n=${e%%:*} k=${e#*:}
	timeout 50 ncu --clock-control none --cache-control all --target-processes all -k "regex:$k" --launch-skip 10 --launch-count 20 \
		--metrics gpu__time_duration.sum --csv \
		$P bench2 dec --shapes $S --m 1 --variants wp3pdl,cublaslt --reps 4 --regimes stream --warmup 50ms --allow-profiler >"$W/ncu-down-$n.csv" 2>&1
	step "ncu $n rc=$?"
done

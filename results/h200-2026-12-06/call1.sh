#!/usr/bin/env bash
# Device call (2026-12-06): wk1 with its per-thread asg/rs and scale-word
# staging addresses hoisted out of the round loop (build/) against the
# committed wk1 (build-old/, built from 0f8b7a4), in order of need, each
# step bounded so the call ends within the device's 600 s: the gemm gate on
# build/; an alternating cross-build bench (old, new, old, new) with
# cuBLASLt fp8 in every run as the control; executed instructions of both
# (ncu); the SASS of both if time is left. Run from the repository root on
# the GPU host with bin/, build/ and build-old/ carried.
set -u
O=${OUT:?}
R=results/h200-2026-12-06
P=bin/parharness
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$O/steps.txt"; }
left() { [ $((SECONDS - start)) -lt "$1" ]; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$O/smi.txt" 2>&1
timeout 200 $P gate --quick --only '^gemm$' --require-device --watchdog 60s --json "$O/gate-gemm.json" >"$O/gate-gemm.log" 2>&1
step "gate gemm rc=$?"
for i in 1 2; do
	for b in build-old build; do
		left 420 || break
		timeout 70 $P bench2 dec --build "$b" --m 1,16,64 --variants wk1S4,cublaslt --reps 4 --regimes stream \
			--watchdog 30s --json "$O/dec-$b-$i.json" >"$O/dec-$b-$i.log" 2>&1
		step "dec $b $i rc=$?"
	done
done
export NCU_METRICS=sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.max,lts__throughput.avg.pct_of_peak_sustained_elapsed
for b in build build-old; do
	left 500 || break
	timeout 45 scripts/ncu.sh '^pq_gemm_dec_wk1_m64$' bench2 dec --build "$b" --shapes "$R/shapes-qkv.txt" --m 64 --variants wk1S4 \
		--reps 4 --regimes stream --warmup 50ms --allow-profiler >"$O/ncu-$b-qkv-wk1_m64-M64.txt" 2>&1
	step "ncu $b rc=$?"
done
for b in build build-old; do
	left 540 || break
	timeout 30 ptxas -arch=sm_90a -v -o "$O/g.cubin" "$b/sm_90a/gemm.ptx" >"$O/ptxas-$b.txt" 2>&1 &&
		cuobjdump -sass -fun pq_gemm_dec_wk1_m64 "$O/g.cubin" >"$O/sass-$b-wk1_m64.txt" 2>&1
	step "sass $b rc=$?"
	rm -f "$O/g.cubin"
done

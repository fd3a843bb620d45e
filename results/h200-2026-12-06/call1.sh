#!/usr/bin/env bash
# Device call (2026-12-06): where wk1's instructions go (SASS, executed
# opcodes, L2 traffic), and wk1 with its per-thread asg/rs and scale-word
# staging addresses hoisted out of the round loop (build/) against the
# committed wk1 (build-old/, built from 0f8b7a4): the gemm gate on build/,
# executed instructions of both, and an alternating cross-build bench (old,
# new, old, new) with cuBLASLt fp8 in every run as the control. Run from the
# repository root on the GPU host with bin/, build/ and build-old/ carried.
set -u
O=${OUT:?}
R=results/h200-2026-12-06
P=bin/parharness
step() { echo "$(date +%T) $*" >>"$O/steps.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$O/smi.txt" 2>&1
ptxas --version >"$O/ptxas-version.txt" 2>&1
for b in build build-old; do
	ptxas -arch=sm_90a -v -o "$O/gemm-$b.cubin" "$b/sm_90a/gemm.ptx" >"$O/ptxas-$b.txt" 2>&1
	for k in pq_gemm_dec_wk1_m16 pq_gemm_dec_wk1_m64; do
		cuobjdump -sass -fun "$k" "$O/gemm-$b.cubin" >"$O/sass-$b-$k.txt" 2>&1
	done
	rm -f "$O/gemm-$b.cubin"
done
step sass done
timeout 200 $P gate --quick --only '^gemm$' --require-device --watchdog 60s --json "$O/gate-gemm.json" >"$O/gate-gemm.log" 2>&1
step "gate gemm rc=$?"
for i in 1 2; do
	for b in build-old build; do
		timeout 100 $P bench2 dec --build "$b" --m 1,16,32,64 --variants wk1S4,wk1S1,cublaslt --reps 4 --regimes stream \
			--watchdog 30s --json "$O/dec-$b-$i.json" >"$O/dec-$b-$i.log" 2>&1
		step "dec $b $i rc=$?"
	done
done
export NCU_INSTANCES=1
export NCU_METRICS=sass__inst_executed_per_opcode,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__m_xbar2l1tex_read_bytes.sum,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.max
for b in build build-old; do
	for spec in "qkv 64 wk1_m64" "qkv 16 wk1_m16"; do
		set -- $spec
		timeout 100 scripts/ncu.sh "^pq_gemm_dec_$3\$" bench2 dec --build "$b" --shapes "$R/shapes-$1.txt" --m "$2" --variants wk1S4 \
			--reps 4 --regimes stream --warmup 50ms --allow-profiler >"$O/ncu-$b-$1-$3-M$2.txt" 2>&1
		step "ncu $b $spec rc=$?"
	done
done

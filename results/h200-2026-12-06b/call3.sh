#!/usr/bin/env bash
# Device call 3 (2026-12-06): why wksS4 at qkv M = 1 takes 27 µs against
# wk1S4's 9: ncu (clocks not locked) of both kernels' first launch, with
# the warp stall breakdown. One tarball back.
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
R=results/h200-2026-12-06
finish() { tar -czf "$O/call3.tar.gz" -C "$W" . ; }
trap finish EXIT
export NCU_METRICS=sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.max,launch__block_size,smsp__inst_executed.sum,l1tex__t_bytes_pipe_lsu_mem_global_op_atom.sum
export NCU_SECTIONS=LaunchStats,Occupancy
for v in wks:wksS4 wk1:wk1S4; do
	timeout 60 scripts/ncu.sh "^pq_gemm_dec_${v%%:*}_m8\$" bench2 dec --shapes "$R/shapes-qkv.txt" --m 1 --variants "${v#*:}" \
		--reps 4 --regimes stream --warmup 50ms --allow-profiler >"$W/ncu-${v%%:*}.txt" 2>&1
	echo "ncu $v rc=$?" >>"$W/steps.txt"
done

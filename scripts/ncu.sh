#!/usr/bin/env bash
# ncu.sh KERNEL_REGEX [parharness args...]: profile the first launch(es) of
# the kernels matching KERNEL_REGEX inside a parharness run with Nsight
# Compute, printing occupancy, DRAM use, issue-slot use and the warp stall
# breakdown (warps stalled per issued instruction, by reason). ncu flushes
# caches before each replayed kernel (cold), so durations read longer than
# graph-timed figures; compare reasons, not µs. The card's clocks are not
# ours to change: ncu runs with --clock-control none (its default locks
# them to base).
# NCU_METRICS=a,b adds metrics; NCU_SECTIONS=a,b adds ncu sections (for
# example InstructionStats,SourceCounters); NCU_INSTANCES=1 prints instanced
# metrics per instance (NCU_METRICS=sass__inst_executed_per_opcode then
# gives the instruction mix by opcode); NCU_COUNT=n profiles n launches;
# NCU_LOG=file writes ncu's report to file as CSV (--csv --log-file), so
# stdout keeps parharness's own output. KERNEL_REGEX is a regex:
# 'pq_gemm_pre' also matches pq_gemm_pre_wg (and is launched first); anchor
# it ('^pq_gemm_pre$') to profile one kernel. bench2 needs --reps 4 or more
# (its engine refuses fewer, even with --launch-once, which times nothing).
#   scripts/ncu.sh pq_gemm_dec_m8 bench2 dec --m 1 --reps 4 --warmup 10ms --min-graph-us 100
# Every cell of a sweep, one checked launch each (bench2 --launch-once
# prints the launches in order, a check's own launch of a reference on a
# row of its own; the k-th profiled kernel is the k-th row of those the
# regex matches):
#   NCU_COUNT=200 NCU_LOG=ncu.csv scripts/ncu.sh '^pq_gemm_dec_(wp3|wps)_m' \
#     bench2 dec --launch-once --m 1,8,16,64 --variants wp3pdl,wpspdl
set -euo pipefail
if [ $# -lt 2 ]; then
	echo "usage: scripts/ncu.sh KERNEL_REGEX parharness-args..." >&2
	exit 2
fi
re=$1
shift
count=${NCU_COUNT:-1}
stalls=""
for r in long_scoreboard short_scoreboard barrier wait math_pipe_throttle lg_throttle mio_throttle membar \
	no_instruction not_selected selected dispatch_stall tex_throttle imc_miss drain branch_resolving; do
	stalls+=",smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
done
metrics="gpu__time_duration.sum,launch__registers_per_thread,launch__grid_size,launch__occupancy_limit_registers"
metrics+=",launch__occupancy_limit_shared_mem,sm__warps_active.avg.pct_of_peak_sustained_active"
metrics+=",dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,lts__t_bytes.sum"
metrics+=",sm__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active${stalls}"
# Tensor pipes: mma.sync (hmma) and Hopper's warpgroup op (gmma).
metrics+=",sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
metrics+=",sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active"
metrics+=",l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed_pipe_fma.sum,smsp__inst_executed_pipe_alu.sum"
metrics+=${NCU_METRICS:+,$NCU_METRICS}
extra=()
IFS=, read -r -a sections <<<"${NCU_SECTIONS:-}"
for s in "${sections[@]}"; do
	[ -n "$s" ] && extra+=(--section "$s")
done
if [ -n "${NCU_LOG:-}" ]; then
	extra+=(--csv --log-file "$NCU_LOG")
fi
if [ "${NCU_INSTANCES:-0}" = 1 ]; then
	extra+=(--print-metric-instances values)
fi
here=$(cd "$(dirname "$0")/.." && pwd)
exec ncu --clock-control none --target-processes all -k "regex:${re}" --launch-count "$count" --metrics "$metrics" \
	${extra[@]+"${extra[@]}"} "$here/bin/parharness" "$@"

#!/usr/bin/env bash
# Third call of 2026-12-07, on the tree with --cpuprofile (build/: gemm.ptx
# 0fa3fad8, as landed).
# On an H200: issue 17's acceptance sweep (both regimes, report), ncu of
# every wp cell if time is left, then every quick gate under a CPU profile.
# On an H100: every quick gate under a CPU profile (where the gemm gate's
# 100-120 s go: the host re-read was not it), then the instruction mix of
# wp3 at M = 8 and 64 on qkv (how much of the issue is the copiers'
# cp.async, which the pad-zero-fill trial showed to be on the critical path
# at large M).
# END (default 560).
set -u
END=${END:-560}
. scripts/devcall.sh call3
ALLM=1,2,5,8,16,24,32,40,48,56,64
quick() {
	local l
	l=$(left $END)
	[ "$l" -gt 20 ] || return 0 # timeout 0 would mean no limit
	[ "$l" -gt "$1" ] && l=$1
	timeout $l $P gate --quick --require-device --watchdog 120s --cpuprofile "$W/gate-quick.pprof" \
		--json "$W/gate-quick.json" >"$W/gate-quick.log" 2>&1
	step "gate quick rc=$? (limit ${l}s)"
}
if grep -q H200 "$W/smi.txt"; then
	l=$(left $END)
	timeout $((l < 150 ? l : 150)) $P bench2 dec --m $ALLM \
		--variants wk1S1,wk1S4,wk1pdl,wp3S3,wp3pdl,wpsS3,wpspdl,wksS4,cublaslt,read --reps 4 \
		--regimes stream,isolated --watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
	step "dec rc=$?"
	[ -s "$W/dec.json" ] && $P report "$W/dec.json" >"$W/report.txt" 2>&1
	[ "$(left $END)" -gt 300 ] && NCU_METRICS=lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum \
		NCU_COUNT=100 NCU_LOG="$W/ncu-cells.csv" timeout 100 scripts/ncu.sh '^pq_gemm_dec_(wp3|wps)_m' \
		bench2 dec --launch-once --m $ALLM --variants wp3pdl,wpspdl --watchdog 60s >"$W/ncu-cells.log" 2>&1
	step "ncu cells rc=$?"
	quick 600
	exit 0
fi
quick 300
[ "$(left $END)" -gt 60 ] || exit 0
NCU_INSTANCES=1 NCU_METRICS=sass__inst_executed_per_opcode,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active \
	NCU_COUNT=2 NCU_LOG="$W/ncu-mix.csv" timeout 50 scripts/ncu.sh '^pq_gemm_dec_wp3_m(8|64)$' \
	bench2 dec --launch-once --m 8,64 --variants wp3pdl --reps 4 --watchdog 30s >"$W/ncu-mix.log" 2>&1
step "ncu mix rc=$?"

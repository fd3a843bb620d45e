#!/usr/bin/env bash
# First call of 2026-12-07, adapting to the card that comes. build/ is the
# landed tree (gemm.ptx 0fa3fad8); build-trial/ is build/ with the gemm.ptx
# of branch trial/pad-zero-fill (23d1d7ce: the wp body's copiers zero-fill
# rows M..NB-1 of each stage in its first round).
# On an H200: issue 17's acceptance sweep (both regimes, the report's
# targets and regret tables), ncu of every wp cell, then every quick gate
# in the time left.
# On an H100: harness-selftest and the gemm gate on the trial (inputs now
# compared on the device: the gemm gate took 123 s on an H100 with the
# host re-read), the trial's ABBA A/B against the landed body at M = 1,
# 57, 61, 64 (prediction: the trial 1-2% faster at 61, more at 57, equal at
# 64 and 1), then memcheck of the trial's wp bodies at every deployed M
# (one checked launch a cell), as time allows.
# END (default 560).
set -u
END=${END:-560}
. scripts/devcall.sh call
ALLM=1,2,5,8,16,24,32,40,48,56,64
rm -rf build-trial && cp -r build build-trial && gzip -dc build-alt/trial.ptx.gz >build-trial/sm_90a/gemm.ptx
md5sum build/sm_90a/gemm.ptx build-trial/sm_90a/gemm.ptx >"$W/md5.txt"
timeout 40 ptxas -arch=sm_90a -v -o /tmp/t.cubin build-trial/sm_90a/gemm.ptx >"$W/ptxas-trial.txt" 2>&1
step "ptxas trial rc=$?"
ab() { # ab LIMIT_PER_RUN: the rotating A/B (ABBA) while time is left
	local i=0 b
	for b in build-trial build build build-trial; do
		i=$((i + 1))
		[ "$(left $END)" -gt "$1" ] || break
		timeout "$1" $P bench2 dec --build $b --m 1,57,61,64 --variants wp3pdl,wpspdl --reps 4 --regimes stream \
			--watchdog 20s --json "$W/ab-$i-$b.json" >"$W/ab-$i-$b.log" 2>&1
		step "ab $i $b rc=$?"
	done
}
if grep -q H200 "$W/smi.txt"; then
	l=$(left $END)
	timeout $((l < 150 ? l : 150)) $P bench2 dec --m $ALLM \
		--variants wk1S1,wk1S4,wk1pdl,wp3S3,wp3pdl,wpsS3,wpspdl,wksS4,cublaslt,read --reps 4 \
		--regimes stream,isolated --watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
	step "dec rc=$?"
	[ -s "$W/dec.json" ] && $P report "$W/dec.json" >"$W/report.txt" 2>&1
	[ "$(left $END)" -gt 120 ] && NCU_METRICS=lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum \
		NCU_COUNT=100 NCU_LOG="$W/ncu-cells.csv" timeout 100 scripts/ncu.sh '^pq_gemm_dec_(wp3|wps)_m' \
		bench2 dec --launch-once --m $ALLM --variants wp3pdl,wpspdl --watchdog 60s >"$W/ncu-cells.log" 2>&1
	step "ncu cells rc=$?"
	l=$(left $END)
	[ "$l" -gt 20 ] || exit 0 # timeout 0 would mean no limit
	timeout $l $P gate --quick --require-device --watchdog 120s --json "$W/gate-quick.json" >"$W/gate-quick.log" 2>&1
	step "gate quick rc=$? (limit ${l}s)"
	exit 0
fi
l=$(left $END)
timeout $((l > 160 ? 150 : l)) $P gate --build build-trial --quick --only '^(harness-selftest|gemm)$' --require-device \
	--watchdog 120s --json "$W/gate-gemm-trial.json" >"$W/gate-gemm-trial.log" 2>&1
step "gate selftest+gemm trial rc=$? (limit ${l}s)"
ab 50
l=$(left $END)
[ "$l" -gt 40 ] || exit 0
timeout $l compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wp \
	$P bench2 dec --build build-trial --launch-once --m $ALLM --variants wp3pdl,wpspdl,wp3S3,wpsS3 --reps 4 \
	--watchdog 120s >"$W/memcheck-trial.log" 2>&1
step "memcheck trial wp rc=$? (limit ${l}s)"

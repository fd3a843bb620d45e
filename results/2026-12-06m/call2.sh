#!/usr/bin/env bash
# Second call of 2026-12-06m, adapting to the card that comes.
# On an H200: issue 17's acceptance, trimmed to fit (the sweep with the
# report's targets and regret tables, ncu of every wp cell, every quick
# gate). On an H100 (where call 1 ran the sweep and gates): is the landed
# build's M = 61 slowdown (+1.0..+2.3% against ecf1bbc1, call 1's
# rotating A/B) about the rows past M (then M = 57, with 7 such rows of
# the m64 body, is slower still and M = 64 is not) or about the code (then
# M = 64 is as slow)? A rotating A/B at M = 1 (control: the landed build
# is faster), 57, 61, 64. Same build and carry as call.sh. END (default 520).
set -u
END=${END:-520}
. scripts/devcall.sh call2
ALLM=1,2,5,8,16,24,32,40,48,56,64
if grep -q H200 "$W/smi.txt"; then
	timeout 130 $P bench2 dec --m $ALLM \
		--variants wk1S1,wk1S4,wk1pdl,wp3S3,wp3pdl,wpsS3,wpspdl,wksS4,cublaslt,read --reps 4 \
		--regimes stream,isolated --watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
	step "dec rc=$?"
	[ -s "$W/dec.json" ] && $P report "$W/dec.json" >"$W/report.txt" 2>&1
	NCU_METRICS=lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum \
		NCU_COUNT=100 NCU_LOG="$W/ncu-cells.csv" timeout 90 scripts/ncu.sh '^pq_gemm_dec_(wp3|wps)_m' \
		bench2 dec --launch-once --m $ALLM --variants wp3pdl,wpspdl --watchdog 60s >"$W/ncu-cells.log" 2>&1
	step "ncu cells rc=$?"
	l=$(left $END)
	timeout $l $P gate --quick --require-device --watchdog 120s --json "$W/gate-quick.json" >"$W/gate-quick.log" 2>&1
	step "gate quick rc=$? (limit ${l}s)"
	exit 0
fi
rm -rf build-old && cp -r build build-old && gzip -dc build-alt/old.ptx.gz >build-old/sm_90a/gemm.ptx
md5sum build/sm_90a/gemm.ptx build-old/sm_90a/gemm.ptx >"$W/md5.txt"
i=0
for b in build build-old build-old build build build-old build-old build; do
	i=$((i + 1))
	[ "$(left $END)" -gt 70 ] || break
	timeout 70 $P bench2 dec --build $b --m 1,57,61,64 --variants wp3pdl,wpspdl --reps 4 --regimes stream --watchdog 20s \
		--json "$W/ab-$i-$b.json" >"$W/ab-$i-$b.log" 2>&1
	step "ab $i $b rc=$?"
done

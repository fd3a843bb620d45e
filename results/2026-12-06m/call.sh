#!/usr/bin/env bash
# Issue 17's acceptance run on whatever card comes (wanted: the H200), in
# one command: the landed build (gemm.ptx md5 0fa3fad8), ptxas and the
# static gates; the decode sweep (both regimes, cuBLASLt, the read roof;
# the report prints the targets and the regret tables); every GPU gate of
# the quick suite; ncu of every wp cell (the limiter per M); then a
# rotating A/B at M = 61 against ecf1bbc1 (build-old: the wp body with its
# zero-store prologue), the one cell where the H100 run of 2026-12-06l saw
# the landed build slower; memcheck of the wp bodies if time is left.
# Build: make kernels; ecf1bbc1 PTX gzipped to build-alt/old.ptx.gz; the
# binary gzipped to build-alt/parharness.gz; carry build/ and build-alt/.
# END (seconds, default 575): when the script must be done; give the run a
# limit a little above it. AB: the A/B's builds in run order.
set -u
O=${OUT:?}
END=${END:-575}
AB=${AB:-build build-old build-old build build build-old}
W=$(mktemp -d)
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness.gz >$P && chmod +x $P
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
left() { echo $(($1 - (SECONDS - start))); }
trap 'tar -czf "$O/call.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$W/smi.txt" 2>&1
cat "$W/smi.txt"
rm -rf build-old && cp -r build build-old && gzip -dc build-alt/old.ptx.gz >build-old/sm_90a/gemm.ptx
md5sum build/sm_90a/gemm.ptx build-old/sm_90a/gemm.ptx >"$W/md5.txt"
ALLM=1,2,5,8,16,24,32,40,48,56,64
timeout 40 ptxas -arch=sm_90a -v -o /tmp/t.cubin build/sm_90a/gemm.ptx >"$W/ptxas.txt" 2>&1
step "ptxas rc=$?"
timeout 130 $P bench2 dec --m $ALLM \
	--variants wk1S1,wk1S4,wk1pdl,wp3S3,wp3pdl,wpsS3,wpspdl,wksS4,cublaslt,read --reps 4 \
	--regimes stream,isolated --watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
step "dec rc=$?"
[ -s "$W/dec.json" ] && $P report "$W/dec.json" >"$W/report.txt" 2>&1
timeout 220 $P gate --quick --require-device --watchdog 120s --json "$W/gate-quick.json" >"$W/gate-quick.log" 2>&1
step "gate quick rc=$?"
l=$(left $((END - 130)))
if [ "$l" -gt 30 ]; then
	NCU_METRICS=lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum \
		NCU_COUNT=100 NCU_LOG="$W/ncu-cells.csv" timeout $l scripts/ncu.sh '^pq_gemm_dec_(wp3|wps)_m' \
		bench2 dec --launch-once --m $ALLM --variants wp3pdl,wpspdl --watchdog 60s >"$W/ncu-cells.log" 2>&1
	step "ncu cells rc=$? (limit ${l}s)"
fi
i=0
for b in $AB; do
	i=$((i + 1))
	[ "$(left $END)" -gt 40 ] || break
	timeout 35 $P bench2 dec --build $b --m 61 --variants wp3pdl,wpspdl --reps 4 --regimes stream --watchdog 20s \
		--json "$W/ab-$i-$b.json" >"$W/ab-$i-$b.log" 2>&1
	step "ab $i $b rc=$?"
done
l=$(left $((END - 5)))
if [ "$l" -gt 60 ]; then
	timeout $l compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wp \
		$P gate --quick --only '^gemm$' --require-device --watchdog 300s --json "$W/gate-gemm-memcheck.json" >"$W/memcheck.log" 2>&1
	step "memcheck gate gemm rc=$? (limit ${l}s)"
fi

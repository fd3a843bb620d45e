#!/usr/bin/env bash
# Call 3 of 2026-12-06l: the gate, A/B and acceptance sweep in one command, for a session
# that may get one machine only. The trial (build/, gemm.ptx md5
# 0fa3fad8: gemm_dec_wp without its zero-store prologue) against the
# landed build (ecf1bbc1, build-old/), with the README's prediction; then
# issue 17's sweep on the trial build (both regimes, cuBLASLt, the read
# roof; the report prints the targets and the regret tables); then the
# gemm gate on the trial under memcheck of every wp body; ncu of every
# cell in whatever time is left.
# Build: make kernels; landed PTX gzipped to build-alt/old.ptx.gz; binary
# gzipped to build-alt/parharness.gz; carry build/ and build-alt/.
# END (seconds, default 575): when the script must be done; give the run a
# limit a little above it. AB: the A/B's builds in run order.
set -u
O=${OUT:?}
END=${END:-575}
AB=${AB:-build build-old build build-old} # the A/B's runs, in order
W=$(mktemp -d)
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness.gz >$P && chmod +x $P
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
left() { echo $(($1 - (SECONDS - start))); }
trap 'tar -czf "$O/call3.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$W/smi.txt" 2>&1
cat "$W/smi.txt"
rm -rf build-old && cp -r build build-old && gzip -dc build-alt/old.ptx.gz >build-old/sm_90a/gemm.ptx
md5sum build/sm_90a/gemm.ptx build-old/sm_90a/gemm.ptx >"$W/md5.txt"
ALLM=1,2,5,8,16,24,32,40,48,56,64
timeout 40 ptxas -arch=sm_90a -v -o /tmp/t.cubin build/sm_90a/gemm.ptx >"$W/ptxas.txt" 2>&1
step "ptxas rc=$?"
timeout 60 $P gate --quick --only '^(ptxas-sm90a|sass-wgmma-hazards|sync-inventory)$' --require-device --json "$W/gate-static.json" >"$W/gate-static.log" 2>&1
step "gate static rc=$?"
i=0
for b in $AB; do
	i=$((i + 1))
	timeout 50 $P bench2 dec --build $b --m 1,5,8,61 --variants wp3pdl,wpspdl,cublaslt --reps 4 --regimes stream --watchdog 20s \
		--json "$W/ab-$i-$b.json" >"$W/ab-$i-$b.log" 2>&1
	step "ab $i $b rc=$?"
done
timeout 130 $P bench2 dec --m $ALLM \
	--variants wk1S1,wk1S4,wk1pdl,wp3S3,wp3pdl,wpsS3,wpspdl,wksS4,cublaslt,read --reps 4 \
	--regimes stream,isolated --watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
step "dec rc=$?"
[ -s "$W/dec.json" ] && $P report "$W/dec.json" >"$W/report.txt" 2>&1
l=$(left $((END - 15)))
timeout $l compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wp \
	$P gate --quick --only '^gemm$' --require-device --watchdog 300s --json "$W/gate-gemm-memcheck.json" >"$W/memcheck.log" 2>&1
step "memcheck gate gemm rc=$? (limit ${l}s)"
l=$(left $END)
if [ "$l" -gt 30 ]; then
	NCU_METRICS=lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum \
		NCU_COUNT=100 NCU_LOG="$W/ncu-cells.csv" timeout $l scripts/ncu.sh '^pq_gemm_dec_(wp3|wps)_m' \
		bench2 dec --launch-once --m $ALLM --variants wp3pdl,wpspdl --watchdog 60s >"$W/ncu-cells.log" 2>&1
	step "ncu cells rc=$? (limit ${l}s)"
fi

#!/usr/bin/env bash
# Call 2 of 2026-12-06l: issue 17's acceptance run on whatever device
# comes (an H200 makes it the acceptance; an H100 gives one consistent
# record of the build): ptxas -v, the static gates (the gemm gate ran on
# this build in call 1, under memcheck),
# the sweep of both regimes with cuBLASLt and the read roof (the report
# prints the targets and the regret tables), then ncu of every cell's two
# bodies (bench2 --launch-once, as in results/2026-12-06k call 1). gemm.ptx md5 0fa3fad8 (the body without its zero-store prologue, gated in call 1).
# Build: make kernels; binary gzipped to build-alt/parharness.gz; carry build/ and build-alt/.
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness.gz >$P && chmod +x $P
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/call2.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$W/smi.txt" 2>&1
cat "$W/smi.txt"
md5sum build/sm_90a/gemm.ptx >"$W/md5.txt"
ALLM=1,2,5,8,16,24,32,40,48,56,64
timeout 60 ptxas -arch=sm_90a -v -o /tmp/g.cubin build/sm_90a/gemm.ptx >"$W/ptxas.txt" 2>&1
step "ptxas rc=$?"
timeout 60 $P gate --quick --only '^(ptxas-sm90a|sass-wgmma-hazards|sync-inventory)$' --require-device --json "$W/gate-static.json" >"$W/gate-static.log" 2>&1
step "gate static rc=$?"
timeout 170 $P bench2 dec --m $ALLM \
	--variants wk1S1,wk1S4,wk1pdl,wp3S3,wp3pdl,wpsS3,wpspdl,wksS4,cublaslt,read --reps 4 \
	--regimes stream,isolated --watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
step "dec rc=$?"
[ -s "$W/dec.json" ] && $P report "$W/dec.json" >"$W/report.txt" 2>&1
NCU_METRICS=lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum \
	NCU_COUNT=100 NCU_LOG="$W/ncu-cells.csv" timeout $((500 - (SECONDS - start))) scripts/ncu.sh '^pq_gemm_dec_(wp3|wps)_m' \
	bench2 dec --launch-once --m $ALLM --variants wp3pdl,wpspdl --watchdog 60s >"$W/ncu-cells.log" 2>&1
step "ncu cells rc=$?"

#!/usr/bin/env bash
# Call 1 of 2026-12-06k, on the landed build (gemm.ptx md5 ecf1bbc1).
# Every cell profiled: one ncu pass over bench2 dec --launch-once (each
# cell's wp3pdl and wpspdl launched once, checked), the metrics of
# scripts/ncu.sh and the L2's throughput and reads by the SMs (at M = 64
# each 64-column tile re-reads M x K activation bytes from L2: on down
# twice the weights' bytes), as CSV.
# On an H200: the acceptance run first (ptxas -v, static gates, the gemm
# gate, the sweep of both regimes with the read roof and cuBLASLt), then
# the ncu pass.
# Otherwise: the ncu pass, then three held-out runs for DecBodySpreadM = 40
# (M = 32, 40, 48, wp3 against wps, plain and PDL, both regimes; predicted
# from results/2026-12-06j call 2: on down wps 2-5% faster at M = 40 and
# 48 under PDL, 2% slower at M = 32), then gate_up, this build against
# 390a4f50 (build-old/), rotating (is the tail-first read's +0.1..+0.6%
# there real?).
# Build first, from the repository root: make kernels; 390a4f50's PTX
# (git show 4e9bbcd:families/gemm/gemm.hip, compiled as in
# results/2026-12-06j/next.sh) gzipped to build-alt/old.ptx.gz; the binary
# (CGO_ENABLED=0 go build -buildvcs=true -ldflags="-s -w") gzipped to
# build-alt/parharness.gz; carry build/ and build-alt/. Everything comes
# back in one file.
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness.gz >$P && chmod +x $P
start=$SECONDS
left() { [ $((SECONDS - start)) -lt "$1" ]; }
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/call1.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$W/smi.txt" 2>&1
cat "$W/smi.txt"
rm -rf build-old && cp -r build build-old && gzip -dc build-alt/old.ptx.gz >build-old/sm_90a/gemm.ptx
md5sum build/sm_90a/gemm.ptx build-old/sm_90a/gemm.ptx >"$W/md5.txt"
ALLM=1,2,5,8,16,24,32,40,48,56,64
cells() { # ncu of every cell's two bodies
	NCU_METRICS=lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum \
		NCU_COUNT=100 NCU_LOG="$W/ncu-cells.csv" timeout "$1" scripts/ncu.sh '^pq_gemm_dec_(wp3|wps)_m' \
		bench2 dec --launch-once --m $ALLM --variants wp3pdl,wpspdl --watchdog 60s >"$W/ncu-cells.log" 2>&1
	step "ncu cells rc=$?"
}
case $(head -2 "$W/smi.txt" | tail -1) in
*H200*)
	timeout 60 ptxas -arch=sm_90a -v -o /tmp/g.cubin build/sm_90a/gemm.ptx >"$W/ptxas.txt" 2>&1
	step "ptxas rc=$?"
	timeout 60 $P gate --quick --only '^(ptxas-sm90a|sass-wgmma-hazards|sync-inventory)$' --require-device --json "$W/gate-static.json" >"$W/gate-static.log" 2>&1
	step "gate static rc=$?"
	timeout 200 $P gate --quick --only '^gemm$' --require-device --watchdog 180s --json "$W/gate-gemm.json" >"$W/gate-gemm.log" 2>&1
	step "gate gemm rc=$?"
	timeout 170 $P bench2 dec --m $ALLM \
		--variants wk1S1,wk1S4,wk1pdl,wp3S3,wp3pdl,wpsS3,wpspdl,wksS4,cublaslt,read --reps 4 \
		--regimes stream,isolated --watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
	step "dec rc=$?"
	left 480 && cells $((560 - (SECONDS - start)))
	;;
*)
	cells 200
	for i in 1 2 3; do
		left 330 || break
		timeout 60 $P bench2 dec --m 32,40,48 --variants wp3S3,wp3pdl,wpsS3,wpspdl,cublaslt --reps 4 --regimes stream,isolated \
			--watchdog 20s --json "$W/spread-$i.json" >"$W/spread-$i.log" 2>&1
		step "spread $i rc=$?"
	done
	i=0
	for b in build build-old build build-old build build-old build build-old; do
		i=$((i + 1))
		left 520 || break
		timeout 35 $P bench2 dec --build $b --shapes results/2026-12-06f/shapes-gateup.txt --m 1,16,64 \
			--variants wp3pdl,wpspdl,cublaslt --reps 4 --regimes stream --watchdog 20s \
			--json "$W/gu-$i-$b.json" >"$W/gu-$i-$b.log" 2>&1
		step "gate_up $i $b rc=$?"
	done
	;;
esac

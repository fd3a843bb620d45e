#!/usr/bin/env bash
# The acceptance call for issue 17, to run only when the device is an
# H200, on the landed build (gemm.ptx md5 390a4f50): ptxas -v, the static
# gates, the plain gemm gate, the acceptance sweep in both regimes with
# the read roof (the report prints the targets, the regret tables and
# the roof model), then ncu (--clock-control none) of the bodies
# gemm.DecBody serves: gate_up wps at M = 1, 16, 64; down wp3 at M = 1,
# 16 and wps at M = 64. Build first, from the repository root:
#   make kernels && mkdir -p build-alt && CGO_ENABLED=0 go build -buildvcs=true \
#     -ldflags="-s -w" -o /tmp/parharness ./cmd/parharness && gzip -c /tmp/parharness >build-alt/parharness.gz
# then run this with build/ and build-alt/ carried. Everything it writes
# comes back in one file (a command returns at most eight).
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness.gz >$P && chmod +x $P
start=$SECONDS
left() { [ $((SECONDS - start)) -lt "$1" ]; }
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/accept.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$W/smi.txt" 2>&1
cat "$W/smi.txt"
md5sum build/sm_90a/gemm.ptx >"$W/md5.txt"
timeout 60 ptxas -arch=sm_90a -v -o /tmp/g.cubin build/sm_90a/gemm.ptx >"$W/ptxas.txt" 2>&1
step "ptxas rc=$?"
timeout 60 $P gate --quick --only '^(ptxas-sm90a|sass-wgmma-hazards)$' --require-device --json "$W/gate-static.json" >"$W/gate-static.log" 2>&1
step "gate static rc=$?"
timeout 230 $P gate --quick --only '^gemm$' --require-device --watchdog 200s --json "$W/gate-gemm.json" >"$W/gate-gemm.log" 2>&1
step "gate gemm rc=$?"
timeout 150 $P bench2 dec --m 1,2,5,8,16,24,32,40,48,56,64 \
	--variants wk1S1,wk1S4,wk1pdl,wp3S3,wp3pdl,wpsS3,wpspdl,wksS4,cublaslt,read --reps 4 \
	--regimes stream,isolated --watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
step "dec rc=$?"
for e in gateup:1:wps_m8:wpspdl down:1:wp3_m8:wp3pdl gateup:16:wps_m16:wpspdl down:16:wp3_m16:wp3pdl \
	gateup:64:wps_m64:wpspdl down:64:wps_m64:wpspdl; do
	left 540 || break
	IFS=: read -r sh m k v <<<"$e"
	timeout 40 ncu --clock-control none --target-processes all -k "regex:^pq_gemm_dec_${k}\$" --launch-count 1 \
		--section SpeedOfLight --section WarpStateStats --section Occupancy --section MemoryWorkloadAnalysis \
		$P bench2 dec --shapes results/2026-12-06f/shapes-$sh.txt --m $m --variants $v --reps 4 --regimes stream \
		--warmup 50ms --allow-profiler >"$W/ncu-$sh-m$m-$k.txt" 2>&1
	step "ncu $sh m$m $k rc=$?"
done

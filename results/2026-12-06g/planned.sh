#!/usr/bin/env bash
# The next session's call (planned, not run: this session's device time ran
# out after call 1): the DSK_RELEASE trial (gemm.ptx md5 390a4f50) gated
# and swept, so that it can become the only form.
# 1. ptxas -v (for gates/testdata/ptxas/clean.txt), the plain gemm gate,
#    the static gates, all on the trial build.
# 2. The acceptance sweep in both regimes with the read roof, on the
#    trial build. Predicted: wps 2-5% faster than on edae4315 in every
#    cell, wp3 within +-0.5%; wpspdl passes wp3pdl on down from M = 48
#    or 56 (call 1: down M = 56 16.61 against 17.34 us, M = 64 17.89
#    against 18.70), where gemm.DecBody still takes wp3: refit it there.
# Build first, from the repository root after `make kernels`:
#   mkdir -p build-alt && clang++-19 -x cuda --cuda-gpu-arch=sm_90a \
#     --cuda-device-only -nocudainc -nocudalib --cuda-feature=+ptx84 -O3 \
#     -ffp-contract=off -S -Ihipsrc -Wall -Werror -DDSK_RELEASE=1 \
#     families/gemm/gemm.hip -o build-alt/release.ptx && gzip -f build-alt/release.ptx
#   CGO_ENABLED=0 go build -buildvcs=true -ldflags="-s -w" -o /tmp/parharness ./cmd/parharness \
#     && gzip -c /tmp/parharness >build-alt/parharness.gz
# then run this with build/ and build-alt/ carried.
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness.gz >$P && chmod +x $P
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/planned.tgz" -C "$W" .; cat "$W/steps.txt"' EXIT
B=build-release
rm -rf $B && cp -r build $B && gzip -dc build-alt/release.ptx.gz >$B/sm_90a/gemm.ptx
nvidia-smi --query-gpu=name,driver_version --format=csv >"$W/smi.txt" 2>&1
md5sum build/sm_90a/gemm.ptx $B/sm_90a/gemm.ptx >"$W/md5.txt"
timeout 60 ptxas -arch=sm_90a -v -o /tmp/g.cubin $B/sm_90a/gemm.ptx >"$W/ptxas.txt" 2>&1
step "ptxas rc=$?"
timeout 210 $P gate --quick --only '^gemm$' --build $B --require-device --watchdog 200s --json "$W/gate-gemm.json" >"$W/gate-gemm.log" 2>&1
step "gate gemm rc=$?"
timeout 60 $P gate --quick --only '^(ptxas-sm90a|sass-wgmma-hazards)$' --build $B --require-device --json "$W/gate-static.json" >"$W/gate-static.log" 2>&1
step "gate static rc=$?"
timeout 150 $P bench2 dec --build $B --m 1,2,5,8,16,24,32,40,48,56,64 \
	--variants wk1S1,wk1S4,wk1pdl,wp3S3,wp3pdl,wpsS3,wpspdl,cublaslt,read --reps 4 \
	--regimes stream,isolated --watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
step "dec rc=$?"

#!/usr/bin/env bash
# Planned for the next session (not run in this one: 315 s of device time
# were left, too little to start a machine).
# On an H200: the acceptance run, results/2026-12-06h/accept.sh (about
# 450 s: ptxas, static gates, the gemm gate, the sweep of both regimes,
# ncu of the bodies gemm.DecBody serves) on the landed build (gemm.ptx md5
# ecf1bbc1).
# Otherwise (about 250 s):
# 1. held-out runs for DecBodySpreadM = 40 (fitted on call 2's sweep):
#    every shape at M = 32, 40, 48, wp3 against wps, plain and PDL, both
#    regimes. Predicted from call 2: on down wps 2-5% faster at M = 40
#    and 48 under PDL, 2% slower at M = 32;
# 2. gate_up alone, this build against 390a4f50 (build-old/), rotating,
#    four runs each: is the tail-first read's +0.1..+0.6% on gate_up
#    (call 1) real? Predicted: within the runs' spread if the read only
#    swaps one round trip for another there.
# Build, from the repository root: make kernels; 390a4f50's PTX:
#   git show 4e9bbcd:families/gemm/gemm.hip >/tmp/old.hip && clang++-19 -x cuda \
#     --cuda-gpu-arch=sm_90a --cuda-device-only -nocudainc -nocudalib --cuda-feature=+ptx84 \
#     -O3 -ffp-contract=off -S -Ihipsrc -Wall -Werror /tmp/old.hip -o build-alt/old.ptx \
#     && gzip -f build-alt/old.ptx
#   CGO_ENABLED=0 go build -buildvcs=true -ldflags="-s -w" -o /tmp/parharness ./cmd/parharness \
#     && gzip -c /tmp/parharness >build-alt/parharness.gz
# and carry build/ and build-alt/.
set -u
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "device: $name"
case $name in *H200*) exec bash results/2026-12-06h/accept.sh ;; esac
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness.gz >$P && chmod +x $P
start=$SECONDS
left() { [ $((SECONDS - start)) -lt "$1" ]; }
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/next.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv >"$W/smi.txt" 2>&1
rm -rf build-old && cp -r build build-old && gzip -dc build-alt/old.ptx.gz >build-old/sm_90a/gemm.ptx
md5sum build/sm_90a/gemm.ptx build-old/sm_90a/gemm.ptx >"$W/md5.txt"
for i in 1 2 3; do
	left 150 || break
	timeout 60 $P bench2 dec --m 32,40,48 --variants wp3S3,wp3pdl,wpsS3,wpspdl,cublaslt --reps 4 --regimes stream,isolated \
		--watchdog 20s --json "$W/spread-$i.json" >"$W/spread-$i.log" 2>&1
	step "spread $i rc=$?"
done
i=0
for b in build build-old build build-old build build-old build build-old; do
	i=$((i + 1))
	left 300 || break
	timeout 40 $P bench2 dec --build $b --shapes results/2026-12-06f/shapes-gateup.txt --m 1,16,64 \
		--variants wp3pdl,wpspdl,cublaslt --reps 4 --regimes stream --watchdog 20s \
		--json "$W/gu-$i-$b.json" >"$W/gu-$i-$b.log" 2>&1
	step "gate_up $i $b rc=$?"
done

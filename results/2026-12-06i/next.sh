#!/usr/bin/env bash
# Planned for the next session (not run). On an H200: the acceptance run
# (results/2026-12-06h/accept.sh, about 450 s). On another card: the
# verdict on DSK_TRYLAST that call 3 could not finish: the gemm gate on
# the trial under memcheck with wps instrumented (about 170 s on the H100
# in results/2026-12-06h/call2), then the A/B with the landed build,
# alternating, three runs each (call 3 had one landed run). Land the
# trial (the knob removed, the tail path the only form) only if the gate
# passes with 0 memcheck errors and wpspdl is faster on qkv, in_proj and
# down beyond the cuBLASLt control's spread. Predicted (from call 3):
# wpspdl -1.5..-3.2% on qkv, in_proj, down; gate_up within +-0.7%.
# Build, from the repository root: make kernels; then
#   clang++-19 -x cuda --cuda-gpu-arch=sm_90a --cuda-device-only -nocudainc -nocudalib \
#     --cuda-feature=+ptx84 -O3 -ffp-contract=off -S -Ihipsrc -Wall -Werror -DDSK_TRYLAST=1 \
#     families/gemm/gemm.hip -o build-alt/trylast.ptx && gzip -f build-alt/trylast.ptx
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
trap 'tar -czf "$O/trylast.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv >"$W/smi.txt" 2>&1
rm -rf build-try && cp -r build build-try && gzip -dc build-alt/trylast.ptx.gz >build-try/sm_90a/gemm.ptx
md5sum build/sm_90a/gemm.ptx build-try/sm_90a/gemm.ptx >"$W/md5.txt"
timeout 280 compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wps \
	$P gate --quick --only '^gemm$' --build build-try --require-device --watchdog 200s --json "$W/gate-gemm-memcheck-try.json" >"$W/memcheck-try.log" 2>&1
step "memcheck try rc=$?"
i=0
for b in build build-try build build-try build build-try; do
	i=$((i + 1))
	left 520 || break
	timeout 60 $P bench2 dec --build $b --m 1,16,64 --variants wp3pdl,wpspdl,cublaslt --reps 4 --regimes stream \
		--watchdog 20s --json "$W/ab-$i-$b.json" >"$W/ab-$i-$b.log" 2>&1
	step "ab $i $b rc=$?"
done

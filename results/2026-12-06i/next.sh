#!/usr/bin/env bash
# Planned for the next session (not run). On an H200: the acceptance run
# (results/2026-12-06h/accept.sh, about 450 s). On another card: the
# verdict on the two hand-off trials, built together (build-alt/both.ptx:
# -DDSK_TRYLAST=1 -DDSK_DEFER=1, md5 5d3fb4ca; TRYLAST alone is
# build-alt/trylast.ptx, md5 ecf1bbc1; only the 8 wps functions differ
# from the landed 390a4f50):
# 1. the gemm gate on both under memcheck with wps instrumented (about
#    170 s on the H100 in results/2026-12-06h/call2); call 3 of
#    results/2026-12-06i ran out of time at 27 of 108 cases of TRYLAST's;
# 2. an A/B of landed, TRYLAST and both, rotating, three runs each.
# Land what passes the gate with 0 memcheck errors and is faster beyond
# the cuBLASLt control's spread (the knobs removed, the paths the only
# form); racecheck on it in the call after.
# Predicted: TRYLAST wpspdl -1.5..-3.2% on qkv, in_proj, down, gate_up
# within +-0.7% (call 3); DEFER on top a further -2..-3% on qkv, in_proj
# and down (the middle hand-off's wait for the atomic, one L2 round trip
# of about 0.27 us, leaves consumer 0's path) and -1.5..-2.5% on gate_up
# (two deferred parts a block); wp3pdl and cuBLASLt unchanged.
# Build, from the repository root: make kernels; then for each of
#   "-DDSK_TRYLAST=1 trylast" and "-DDSK_TRYLAST=1 -DDSK_DEFER=1 both":
#   clang++-19 -x cuda --cuda-gpu-arch=sm_90a --cuda-device-only -nocudainc -nocudalib \
#     --cuda-feature=+ptx84 -O3 -ffp-contract=off -S -Ihipsrc -Wall -Werror DEFINES \
#     families/gemm/gemm.hip -o build-alt/NAME.ptx && gzip -f build-alt/NAME.ptx
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
for n in trylast both; do
	rm -rf build-$n && cp -r build build-$n && gzip -dc build-alt/$n.ptx.gz >build-$n/sm_90a/gemm.ptx
done
md5sum build/sm_90a/gemm.ptx build-trylast/sm_90a/gemm.ptx build-both/sm_90a/gemm.ptx >"$W/md5.txt"
for n in trylast both; do
	timeout 60 ptxas -arch=sm_90a -v -o /tmp/t.cubin build-$n/sm_90a/gemm.ptx >"$W/ptxas-$n.txt" 2>&1
	step "ptxas $n rc=$?"
done
timeout 280 compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wps \
	$P gate --quick --only '^gemm$' --build build-both --require-device --watchdog 200s --json "$W/gate-gemm-memcheck-both.json" >"$W/memcheck-both.log" 2>&1
step "memcheck both rc=$?"
i=0
for b in build build-trylast build-both build build-trylast build-both build build-trylast build-both; do
	i=$((i + 1))
	left 520 || break
	timeout 60 $P bench2 dec --build $b --m 1,16,64 --variants wp3pdl,wpspdl,cublaslt --reps 4 --regimes stream \
		--watchdog 20s --json "$W/ab-$i-$b.json" >"$W/ab-$i-$b.log" 2>&1
	step "ab $i $b rc=$?"
done

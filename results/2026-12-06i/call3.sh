#!/usr/bin/env bash
# The DSK_TRYLAST trial (build-alt/trylast.ptx.gz: clang++-19 as in the
# Makefile with -DDSK_TRYLAST=1; only the 8 wps functions differ from the
# landed 390a4f50): ptxas -v, an A/B alternating with the landed build,
# then the gemm gate on it under memcheck with wps instrumented.
# Predicted: wpspdl 0.3-0.8 us faster on every shape at M = 1..64 (one L2
# round trip and the slot's store off each block's tail), wp3pdl and
# cuBLASLt unchanged.
# Between them, why wps is 26-37% slower than wp3 on qkv's problem (112
# tiles, one wave 85% full): bench2 --max-grid 112 gives every qkv block
# one whole tile (one segment, no hand-off), so wps@112 against wp3
# measures the stream-K loop itself. Predicted: within 3% of wp3.
# (Cut twice to fit the device time failed starts left.)
# Build: make kernels; CGO_ENABLED=0 go build -buildvcs=true -ldflags="-s -w"
#   -o /tmp/parharness ./cmd/parharness && gzip -c /tmp/parharness >build-alt/parharness.gz
# carry build/ and build-alt/.
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness.gz >$P && chmod +x $P
start=$SECONDS
left() { [ $((SECONDS - start)) -lt "$1" ]; }
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/grid.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv >"$W/smi.txt" 2>&1
md5sum build/sm_90a/gemm.ptx >"$W/md5.txt"
rm -rf build-try && cp -r build build-try && gzip -dc build-alt/trylast.ptx.gz >build-try/sm_90a/gemm.ptx
md5sum build-try/sm_90a/gemm.ptx >>"$W/md5.txt"
timeout 60 ptxas -arch=sm_90a -v -o /tmp/t.cubin build-try/sm_90a/gemm.ptx >"$W/ptxas-try.txt" 2>&1
step "ptxas try rc=$?"
i=0
for b in build-try build build-try build; do
	i=$((i + 1))
	left 120 || break
	timeout 60 $P bench2 dec --build $b --m 1,16,64 --variants wp3pdl,wpspdl,cublaslt --reps 4 --regimes stream \
		--watchdog 20s --json "$W/ab-$i-$b.json" >"$W/ab-$i-$b.log" 2>&1
	step "ab $i $b rc=$?"
done
# The grid probe, all four shapes at a grid of 112 (qkv's tiles: every
# qkv block one whole tile), on the landed build.
if left 150; then
	timeout 50 $P bench2 dec --max-grid 112 --m 1,16,64 --variants wp3pdl,wpspdl --reps 4 --regimes stream \
		--watchdog 20s --json "$W/all-g112.json" >"$W/all-g112.log" 2>&1
	step "grid 112 rc=$?"
fi
if left 175; then
	timeout $((275 - (SECONDS - start))) compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wps \
		$P gate --quick --only '^gemm$' --build build-try --require-device --watchdog 160s --json "$W/gate-gemm-memcheck-try.json" >"$W/memcheck-try.log" 2>&1
	step "memcheck try rc=$?"
fi

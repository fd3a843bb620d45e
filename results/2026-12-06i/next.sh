#!/usr/bin/env bash
# Planned for the next session (not run). On an H200: the acceptance run
# (results/2026-12-06h/accept.sh, about 450 s). On another card: the
# verdict on the three stream-K trials (only the wps functions, and for
# DIV32 the wks ones, differ from the landed 390a4f50):
#   trylast = -DDSK_TRYLAST=1 (md5 ecf1bbc1),
#   both    = -DDSK_TRYLAST=1 -DDSK_DEFER=1 (md5 5d3fb4ca),
#   all     = -DDSK_TRYLAST=1 -DDSK_DEFER=1 -DDSK_DIV32=1 (md5 cfdea38f):
# 1. ptxas -v of each; the gemm gate on `all` under memcheck with wps
#    instrumented (about 170 s on the H100 in results/2026-12-06h/call2;
#    call 3 of results/2026-12-06i ran out of time at 27 of 108 cases of
#    TRYLAST's), which runs every path of the three;
# 2. an A/B of landed, trylast, both and all, rotating, three runs each.
# Land what passes the gate with 0 memcheck errors and is faster beyond
# the cuBLASLt control's spread (the knobs removed, the paths the only
# form); racecheck, and memcheck with wks instrumented, in the call after.
# Predicted, wpspdl: TRYLAST -1.5..-3.2% on qkv, in_proj, down, gate_up
# within +-0.7% (call 3); DEFER on top a further -2..-3% on qkv, in_proj
# and down (the middle hand-off's wait for the atomic, one L2 round trip
# of about 0.27 us, leaves consumer 0's path) and -1.5..-2.5% on gate_up
# (two deferred parts a block); DIV32 on top -1..-3% at M <= 16 (part of
# the 0.65 us the stream-K loop costs over wp3 at qkv's 112 tiles: two
# 64-bit divisions before the block's first copy, two or more at each
# hand-off); wp3pdl and cuBLASLt unchanged.
# Build, from the repository root: make kernels; then for each NAME and
# its DEFINES above:
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
for n in trylast both all; do
	rm -rf build-$n && cp -r build build-$n && gzip -dc build-alt/$n.ptx.gz >build-$n/sm_90a/gemm.ptx
done
md5sum build/sm_90a/gemm.ptx build-*/sm_90a/gemm.ptx >"$W/md5.txt"
for n in trylast both all; do
	timeout 60 ptxas -arch=sm_90a -v -o /tmp/t.cubin build-$n/sm_90a/gemm.ptx >"$W/ptxas-$n.txt" 2>&1
	step "ptxas $n rc=$?"
done
timeout 280 compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wps \
	$P gate --quick --only '^gemm$' --build build-all --require-device --watchdog 200s --json "$W/gate-gemm-memcheck-all.json" >"$W/memcheck-all.log" 2>&1
step "memcheck all rc=$?"
i=0
for b in build build-trylast build-both build-all build build-trylast build-both build-all build build-trylast build-both build-all; do
	i=$((i + 1))
	left 510 || break
	timeout 60 $P bench2 dec --build $b --m 1,16,64 --variants wp3pdl,wpspdl,cublaslt --reps 4 --regimes stream \
		--watchdog 20s --json "$W/ab-$i-$b.json" >"$W/ab-$i-$b.log" 2>&1
	step "ab $i $b rc=$?"
done

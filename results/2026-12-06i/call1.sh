#!/usr/bin/env bash
# Planned for the next session (not run): the DSK_GATHER_PIPE trial
# (gemm.hip, default off; trial gemm.ptx md5 cf57f6f9, only the 16 wks
# and wps functions differ from the landed 390a4f50). The gather of a
# shared stream-K tile loads block c + 1's partial before adding block
# c's, so its L2 round trips overlap instead of one a block.
# Predicted: wpspdl and wksS4 1-3% faster (one L2 round trip at each
# block's last tile, about 0.3-0.5 µs, on the critical path), most on
# gate_up, where every block ends in a shared tile; wp3pdl and cuBLASLt
# within +-0.5%; no stack or spill (the pipeline holds a second MT x 4
# floats only in the gather, after the rounds).
# 1. ptxas -v of the trial; 2. default and trial alternating, four runs
#    each; 3. if time is left, the gemm gate on the trial under memcheck
#    with wps instrumented; 4. ncu of wp3 and wps on qkv's problem
#    (shapes-qkv.txt).
# Build first, from the repository root after `make kernels`:
#   mkdir -p build-alt && clang++-19 -x cuda --cuda-gpu-arch=sm_90a \
#     --cuda-device-only -nocudainc -nocudalib --cuda-feature=+ptx84 -O3 \
#     -ffp-contract=off -S -Ihipsrc -Wall -Werror -DDSK_GATHER_PIPE=1 \
#     families/gemm/gemm.hip -o build-alt/pipe.ptx && gzip -f build-alt/pipe.ptx
#   CGO_ENABLED=0 go build -buildvcs=true -ldflags="-s -w" -o /tmp/parharness ./cmd/parharness \
#     && gzip -c /tmp/parharness >build-alt/parharness.gz
# then run this with build/ and build-alt/ carried.
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness.gz >$P && chmod +x $P
start=$SECONDS
left() { [ $((SECONDS - start)) -lt "$1" ]; }
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/gather.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv >"$W/smi.txt" 2>&1
rm -rf build-pipe && cp -r build build-pipe && gzip -dc build-alt/pipe.ptx.gz >build-pipe/sm_90a/gemm.ptx
md5sum build/sm_90a/gemm.ptx build-pipe/sm_90a/gemm.ptx >"$W/md5.txt"
timeout 60 ptxas -arch=sm_90a -v -o /tmp/p.cubin build-pipe/sm_90a/gemm.ptx >"$W/ptxas-pipe.txt" 2>&1
step "ptxas pipe rc=$?"
i=0
for b in build-pipe build build-pipe build build-pipe build build-pipe build; do
	i=$((i + 1))
	left 380 || break
	timeout 60 $P bench2 dec --build $b --m 1,16,56,64 --variants wp3pdl,wpsS3,wpspdl,wksS4,cublaslt --reps 4 --regimes stream \
		--watchdog 20s --json "$W/ab-$i-$b.json" >"$W/ab-$i-$b.log" 2>&1
	step "ab $i $b rc=$?"
done
if left 360; then
	timeout 230 compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wps \
		$P gate --quick --only '^gemm$' --build build-pipe --require-device --watchdog 200s --json "$W/gate-gemm-memcheck-pipe.json" >"$W/memcheck-pipe.log" 2>&1
	step "memcheck pipe rc=$?"
fi
# 4. Why wps is 26-37% slower than wp3 on qkv and in_proj at every M
#    (one wave 85-97% full: each block does 85-97% of a wp3 block's
#    units, so the hand-off alone should cost at most one tile's gather):
#    ncu of both bodies on qkv's problem at M = 1, landed build.
for e in wp3_m8:wp3pdl wps_m8:wpspdl; do
	left 540 || break
	IFS=: read -r k v <<<"$e"
	timeout 40 ncu --clock-control none --target-processes all -k "regex:^pq_gemm_dec_${k}\$" --launch-count 1 \
		--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy \
		$P bench2 dec --shapes results/2026-12-06h/shapes-qkv.txt --m 1 --variants $v --reps 4 --regimes stream \
		--warmup 50ms --allow-profiler >"$W/ncu-qkv-m1-$k.txt" 2>&1
	step "ncu qkv m1 $k rc=$?"
done

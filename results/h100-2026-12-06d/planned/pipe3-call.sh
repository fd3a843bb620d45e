#!/usr/bin/env bash
# The DWP3_PIPE trial (planned, not run): ptxas -v of the trial build (a
# spill or stack in a wp3 kernel ends it), then the default and the trial
# alternating at M = 1, 16, 32, 64 (stream), every output checked.
# Predicted: if wp3's consumers are now bound by their own chain (call 4's
# ncu: the wgmma wait and the fold), overlapping a round's ops with the
# previous round's fold takes 10-20% off M = 32..64; M <= 8 unchanged.
# Run from the repository root with bin/, build/ and build-alt/ carried.
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/pipe3-call.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
rm -rf build-pipe3 && cp -r build build-pipe3 && gzip -dc build-alt/pipe3.ptx.gz >build-pipe3/sm_90a/gemm.ptx
md5sum build/sm_90a/gemm.ptx build-pipe3/sm_90a/gemm.ptx >"$W/md5.txt"
timeout 60 ptxas -arch=sm_90a -v -o /tmp/p.cubin build-pipe3/sm_90a/gemm.ptx >"$W/ptxas-pipe3.txt" 2>&1
step "ptxas rc=$?"
i=0
for b in build build-pipe3 build build-pipe3; do
	i=$((i + 1))
	timeout 60 $P bench2 dec --build $b --m 1,16,32,64 --variants wp3S3,wp3pdl,cublaslt --reps 4 --regimes stream \
		--watchdog 30s --json "$W/ab-$i-$b.json" >"$W/ab-$i-$b.log" 2>&1
	step "ab $i $b rc=$?"
done

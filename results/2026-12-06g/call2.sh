#!/usr/bin/env bash
# Call 2: the build to land (the stream-K hand-off released by thread 0's
# acq_rel counter atomic: call 1's DSK_RELEASE trial, PTX identical, md5
# 390a4f50; the DWPS_DEFER trial removed). ptxas -v (the ptxas gate's
# clean report), the plain gemm gate, the static gates, then as much of
# a stream sweep of wp3 and wps as the session's device time leaves (the
# command ends by 280 s): where the faster wps now passes wp3 (call 1:
# down M = 56, 64), for gemm.DecBody. Run from the repository root with build/
# and build-alt/ carried.
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness.gz >$P && chmod +x $P
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/call2.tgz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv >"$W/smi.txt" 2>&1
md5sum build/sm_90a/gemm.ptx >"$W/md5.txt"
timeout 60 ptxas -arch=sm_90a -v -o /tmp/g.cubin build/sm_90a/gemm.ptx >"$W/ptxas.txt" 2>&1
step "ptxas rc=$?"
timeout 210 $P gate --quick --only '^gemm$' --require-device --watchdog 200s --json "$W/gate-gemm.json" >"$W/gate-gemm.log" 2>&1
step "gate gemm rc=$?"
timeout 60 $P gate --quick --only '^(ptxas-sm90a|sass-wgmma-hazards)$' --require-device --json "$W/gate-static.json" >"$W/gate-static.log" 2>&1
step "gate static rc=$?"
left=$((280 - SECONDS + start))
[ $left -gt 20 ] && timeout $left $P bench2 dec --m 1,24,40,56,64 \
	--variants wp3pdl,wpspdl,wp3S3,wpsS3,cublaslt --reps 4 \
	--regimes stream --watchdog 15s --json "$W/dec.json" >"$W/dec.log" 2>&1
step "dec rc=$?"

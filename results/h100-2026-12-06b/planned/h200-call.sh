#!/usr/bin/env bash
# Issue 17's acceptance sweep with wp after the bulk-warp fix, on the H200
# if one comes: bench2 dec, every variant that leads some cell (wk1 at
# S = 1 and 4, both PDL launches, wp) and cuBLASLt fp8, both regimes.
set -u
O=${OUT:?}
W=$(mktemp -d)
trap 'tar -czf "$O/h200-call.tar.gz" -C "$W" .' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$W/smi.txt" 2>&1
md5sum build/sm_90a/gemm.ptx >"$W/md5.txt"
timeout 170 bin/parharness bench2 dec --m 1,2,5,8,16,24,32,40,48,56,64 --variants wk1S1,wk1S4,wk1pdl,wpS2,wppdl,cublaslt \
	--reps 4 --regimes stream,isolated --watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
echo "dec rc=$?" | tee "$W/steps.txt"

#!/usr/bin/env bash
# Call 2b (call 2 never started: no machine came, and the session's device
# time left only this): the plain gemm gate on the build that lands
# (gemm.ptx md5 390a4f50). Run from the repository root with build/ and
# build-alt/ carried.
set -u
O=${OUT:?}
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness.gz >$P && chmod +x $P
md5sum build/sm_90a/gemm.ptx >"$O/md5.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv >>"$O/md5.txt" 2>&1
timeout 200 $P gate --quick --only '^gemm$' --require-device --watchdog 190s --json "$O/gate-gemm.json" >"$O/gate-gemm.log" 2>&1
echo "gate gemm rc=$? after ${SECONDS}s" | tee -a "$O/md5.txt"
tail -3 "$O/gate-gemm.log"

#!/usr/bin/env bash
# call5: the landed build (wp and wp3 back to main's instruction shapes:
# call 4 measured the previous form 3-4% slower at down M = 1; wps as
# gated in call 3). ptxas -v and the static gates, the gemm gate (plain:
# the device time left does not cover memcheck), then old and new builds
# at M = 1, 64 (wp3, cuBLASLt). Written straight to $OUT (no tarball) so
# a cut-off run still returns what it finished.
# Run from the repository root with build/ and build-alt/ carried.
set -u
O=${OUT:?}
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness-new.gz >$P && chmod +x $P
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$O/steps.txt"; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv; md5sum build/sm_90a/gemm.ptx; } >"$O/smi-md5.txt" 2>&1
timeout 60 ptxas -arch=sm_90a -v -o /tmp/g.cubin build/sm_90a/gemm.ptx >"$O/ptxas.txt" 2>&1
step "ptxas rc=$?"
timeout 60 $P gate --quick --only '^(ptxas-sm90a|sass-wgmma-hazards)$' --require-device >"$O/gate-static.log" 2>&1
step "gate static rc=$?"
timeout 130 $P gate --quick --only '^gemm$' --require-device --watchdog 120s >"$O/gate-gemm.log" 2>&1
step "gate gemm rc=$?"
mkdir -p bin-old && gzip -dc build-alt/parharness-old.gz >bin-old/parharness && chmod +x bin-old/parharness
rm -rf build-old && cp -r build build-old && gzip -dc build-alt/old.ptx.gz >build-old/sm_90a/gemm.ptx
timeout 25 $P bench2 dec --m 1,64 --variants wp3S3,wp3pdl,cublaslt --reps 4 --regimes stream --watchdog 20s --json "$O/ab-1-new.json" >/dev/null 2>&1
step "ab new rc=$?"
timeout 25 bin-old/parharness bench2 dec --build build-old --m 1,64 --variants wp3S3,wp3pdl,cublaslt --reps 4 --regimes stream --watchdog 20s --json "$O/ab-2-old.json" >/dev/null 2>&1
step "ab old rc=$?"

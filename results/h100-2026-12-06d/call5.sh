#!/usr/bin/env bash
# call5: the fixed-piece copiers without the dead local stores (no
# lambdas; PTX without a local depot). The device time left was about
# four minutes, so each step writes straight to $OUT: ptxas -v, the static
# device gates, the gemm gate, and a short dec run in both regimes.
# Run from the repository root with bin/ and build/ carried.
set -u
O=${OUT:?}
P=bin/parharness
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$O/steps.txt"; }
md5sum build/sm_90a/gemm.ptx >"$O/steps.txt"
timeout 40 ptxas -arch=sm_90a -v -o /tmp/g.cubin build/sm_90a/gemm.ptx >"$O/ptxas.txt" 2>&1
step "ptxas rc=$?"
timeout 50 $P gate --quick --only '^(ptxas-sm90a|sass-wgmma-hazards)$' --require-device >"$O/gate-static.log" 2>&1
step "gate static rc=$?"
timeout 90 $P gate --quick --only '^gemm$' --require-device --watchdog 60s >"$O/gate-gemm.log" 2>&1
step "gate gemm rc=$?"
timeout 60 $P bench2 dec --m 1,8,16,32,64 --variants wk1pdl,wppdl,wp3S3,wp3pdl,cublaslt --reps 4 --regimes stream,isolated \
	--watchdog 30s --json "$O/dec.json" >"$O/dec.log" 2>&1
step "dec rc=$?"

#!/bin/bash
# device run 1: the wgmma decode kernels' gate, resources, first timing
set -x
O=$OUT; mkdir -p $O/r
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/r/smi.txt 2>&1
ptxas -arch=sm_90a -v build/sm_90a/gemm.ptx -o /tmp/g.cubin > $O/r/ptxas.txt 2>&1
timeout -s INT 240 bin/parharness gate --only '^gemm$' --quick --require-device --json $O/r/gate.json > $O/r/gate.txt 2>&1
echo "gate rc=$?" >> $O/r/gate.txt
timeout -s INT 200 bin/parharness bench2 dec --m 1,8,16,64 --variants wg,cublaslt --regimes stream --reps 6 --json $O/r/dec.json > $O/r/dec.txt 2>&1
echo "bench rc=$?" >> $O/r/dec.txt
tar czf $O/r1.tgz -C $O r
tail -5 $O/r/gate.txt; grep -A4 "dec_wg" $O/r/ptxas.txt | head -30; tail -40 $O/r/dec.txt

#!/bin/bash
set -x
O=$OUT; mkdir -p $O/r
ptxas -arch=sm_90a -v build/sm_90a/gemm.ptx -o /tmp/g.cubin > $O/r/ptxas.txt 2>&1
grep C7514 $O/r/ptxas.txt | head
timeout -s INT 240 bin/parharness gate --only '^gemm$' --quick --require-device --json $O/r/gate.json > $O/r/gate.txt 2>&1
echo "gate rc=$?" >> $O/r/gate.txt
timeout -s INT 260 bin/parharness bench2 dec --m 1,8,16,40,64 --variants wg,cublaslt --regimes stream --reps 6 --json $O/r/dec.json > $O/r/dec.txt 2>&1
echo "bench rc=$?" >> $O/r/dec.txt
tar czf $O/r2.tgz -C $O r
tail -3 $O/r/gate.txt; grep -A3 "for pq_gemm_dec_wg" $O/r/ptxas.txt | grep Used; grep " wg " $O/r/dec.txt

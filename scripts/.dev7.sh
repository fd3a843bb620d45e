#!/bin/bash
O=$OUT; mkdir -p $O/r
ptxas -arch=sm_90a -v build/sm_90a/gemm.ptx -o /tmp/g.cubin > $O/r/ptxas-gemm.txt 2>&1
grep -c C7514 $O/r/ptxas-gemm.txt; grep -A3 "for pq_gemm_dec_wg" $O/r/ptxas-gemm.txt | grep -E "Used|spill"
timeout -s INT 90 bin/parharness gate --only '^gemm$' --quick --require-device --json $O/r/gate.json > $O/r/gate.txt 2>&1
echo "gate rc=$?"; grep "passed" $O/r/gate.txt
timeout -s INT 150 bin/parharness bench2 dec --m 1,16,64 --variants wgS1,wgS2,wgS3,wgS4,wgS5,wgS6,wgS8,cublaslt --regimes stream --reps 4 --json $O/r/dec.json > $O/r/dec.txt 2>&1
echo "dec rc=$?"
grep -E " wgS| S[0-9]+ " $O/r/dec.txt | grep -v "^ *$" | head -60
grep -A30 "regret of law gemm.DecSplitKWG" $O/r/dec.txt | head -32
tar czf $O/r7.tgz -C $O r

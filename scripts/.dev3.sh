#!/bin/bash
set -x
O=$OUT; mkdir -p $O/r
ptxas -arch=sm_90a -v build/sm_90a/gemm.ptx -o /tmp/g.cubin > $O/r/ptxas-gemm.txt 2>&1
grep C7514 $O/r/ptxas-gemm.txt | head -3
timeout -s INT 200 bin/parharness gate --only '^gemm$|^gemm5$' --quick --require-device --json $O/r/gate.json > $O/r/gate.txt 2>&1
echo "gate rc=$?" >> $O/r/gate.txt
tail -4 $O/r/gate.txt
timeout -s INT 150 bin/parharness bench2 dec --m 1,8,16,40,64 --variants wg,cublaslt --regimes stream --reps 6 --json $O/r/dec.json > $O/r/dec.txt 2>&1
echo "dec rc=$?" >> $O/r/dec.txt
grep " wg " $O/r/dec.txt
timeout -s INT 100 bin/parharness bench2 int5 --m 1,8 --regimes stream --reps 6 --json $O/r/int5.json > $O/r/int5.txt 2>&1
echo "int5 rc=$?" >> $O/r/int5.txt
timeout -s INT 100 bin/parharness bench2 wp --m 1,8,16,64 --regimes stream --reps 6 --json $O/r/wp.json > $O/r/wp.txt 2>&1
echo "wp rc=$?" >> $O/r/wp.txt
tar czf $O/r3.tgz -C $O r
grep -A3 "for pq_gemm_dec_wg" $O/r/ptxas-gemm.txt | grep Used
tail -3 $O/r/int5.txt $O/r/wp.txt

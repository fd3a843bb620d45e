#!/usr/bin/env bash
# Device call 5 (2026-12-06): three builds of the same kernels that differ
# only in how the FP staging forms its asg/rs and scale-word addresses
# (build/ = A; C and E, whose gemm.ptx travels gzipped in build-alt/), because register allocation at
# the 128-register bound decides whether wk1_m32 spills and no ptxas runs
# where the builds are made. ptxas -v on each; the first of C, E, A with
# no stack or spill in any gemm kernel is gated and timed: bench2 dec
# (M = 1, 8, 16, 64; wk1 at S = 1 and 4, wks at S = 2 and 4, cuBLASLt
# fp8; stream and isolated), the gemm quick gate, memcheck of the wks
# kernels if time is left. One tarball back ($OUT keeps at most 8 files).
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
left() { [ $((SECONDS - start)) -lt "$1" ]; }
finish() { tar -czf "$O/call5.tar.gz" -C "$W" . ; cat "$W/steps.txt"; }
trap finish EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$W/smi.txt" 2>&1
for v in C E; do # the alternatives travel as their gemm.ptx alone
	rm -rf "build-$v" && cp -r build "build-$v" && gzip -dc "build-alt/$v.ptx.gz" >"build-$v/sm_90a/gemm.ptx"
done
for v in A:build C:build-C E:build-E; do
	(timeout 90 ptxas -arch=sm_90a -v -o "$W/${v%%:*}.cubin" "${v#*:}/sm_90a/gemm.ptx" >"$W/ptxas-${v%%:*}.txt" 2>&1; rm -f "$W/${v%%:*}.cubin") &
done
wait
B=""
for v in C:build-C E:build-E A:build; do
	f="$W/ptxas-${v%%:*}.txt"
	if grep -q 'Used [0-9]* registers' "$f" && ! grep -Eq '[1-9][0-9]* bytes (stack frame|spill)' "$f"; then B=${v#*:}; echo "${v%%:*} $B" >"$W/chosen.txt"; break; fi
done
[ -n "$B" ] || { B=build; echo "none clean: A build" >"$W/chosen.txt"; }
step "ptxas chosen=$(cat "$W/chosen.txt")"
timeout 130 $P bench2 dec --build "$B" --m 1,8,16,64 --variants wk1S1,wk1S4,wksS2,wksS4,cublaslt --reps 4 --regimes stream,isolated \
	--watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
step "dec rc=$?"
left 170 && timeout 170 $P gate --build "$B" --quick --only '^gemm$' --require-device --watchdog 60s --json "$W/gate-gemm.json" >"$W/gate-gemm.log" 2>&1
step "gate gemm rc=$?"
left 250 && timeout $((330 - (SECONDS - start))) compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wks \
	$P gate --build "$B" --quick --only '^gemm$' --require-device --watchdog 120s >"$W/memcheck-wks.log" 2>&1
step "memcheck rc=$?"

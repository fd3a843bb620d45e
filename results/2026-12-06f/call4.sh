#!/usr/bin/env bash
# call4: the gemm gate under memcheck on exactly the landed build
# (edae4315), every wp, wp3 and wps kernel instrumented (kns matches the
# prefix pq_gemm_dec_wp); then memcheck on the racecheck probe's three
# correct modes and the sanitizer's version. Prediction: PASS, 0 errors.
# Run from the repository root with build/ and build-alt/ carried.
set -u
O=${OUT:?}
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness.gz >$P && chmod +x $P
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$O/steps.txt"; }
md5sum build/sm_90a/gemm.ptx >"$O/md5.txt"
compute-sanitizer --version >>"$O/md5.txt" 2>&1
timeout 300 compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wp \
	$P gate --quick --only '^gemm$' --require-device --watchdog 270s >"$O/memcheck-gemm.log" 2>&1
step "memcheck gemm rc=$?"
gzip -9 "$O/memcheck-gemm.log"
D=results/2026-12-06f/racecheck-probe
if nvcc -arch=sm_90a -O2 -o /tmp/probe $D/probe.cu >/dev/null 2>&1; then
	for m in 0 1 2; do
		timeout 40 compute-sanitizer --tool memcheck /tmp/probe $m >>"$O/memcheck-probe.txt" 2>&1
		step "memcheck probe $m rc=$?"
	done
fi
cat "$O/steps.txt"

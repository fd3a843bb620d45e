#!/usr/bin/env bash
# call1: the isolated regime's scrub, and the DWPS_OPAQUE trial.
# 1. The acceptance sweep in both regimes with the new default scrub
#    (reads 3x the last-level cache), then a subset with --scrub copy (the
#    old scrub) in the same session. Prediction: with the read scrub the
#    isolated times fall to about the stream ones plus 1-2 us (events,
#    ramp); with the copy scrub they stay 6-10 us above (the write-back of
#    up to half the cache's dirty lines). The scrub check passes.
# 2. DWPS_OPAQUE: ptxas -v (no stack in any wps kernel; wps_m64 has 80
#    bytes now), the gemm gate under memcheck on it with wps instrumented,
#    then the default and the trial alternating (wps within +-1% at
#    M <= 56, +-2% at M = 64).
# Run from the repository root with build/ and build-alt/ carried
# (build-alt: this build's binary and the trial's gemm.ptx, gzipped).
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness.gz >$P && chmod +x $P
start=$SECONDS
left() { [ $((SECONDS - start)) -lt "$1" ]; }
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/call1.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$W/smi.txt" 2>&1
md5sum build/sm_90a/gemm.ptx >"$W/md5.txt"
rm -rf build-opaque && cp -r build build-opaque && gzip -dc build-alt/opaque.ptx.gz >build-opaque/sm_90a/gemm.ptx
md5sum build-opaque/sm_90a/gemm.ptx >>"$W/md5.txt"
timeout 60 ptxas -arch=sm_90a -v -o /tmp/o.cubin build-opaque/sm_90a/gemm.ptx >"$W/ptxas-opaque.txt" 2>&1
step "ptxas opaque rc=$?"
timeout 150 $P bench2 dec --m 1,2,5,8,16,24,32,40,48,56,64 \
	--variants wk1S1,wk1S4,wk1pdl,wp3S3,wp3pdl,wpsS3,wpspdl,cublaslt --reps 4 \
	--regimes stream,isolated --watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
step "dec (scrub read) rc=$?"
timeout 60 $P bench2 dec --m 1,8,64 --variants wp3pdl,wpspdl,cublaslt --reps 4 \
	--regimes stream,isolated --scrub copy --watchdog 30s --json "$W/dec-copyscrub.json" >"$W/dec-copyscrub.log" 2>&1
step "dec (scrub copy) rc=$?"
timeout 230 compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wps \
	$P gate --quick --only '^gemm$' --build build-opaque --require-device --watchdog 200s --json "$W/gate-gemm-opaque.json" >"$W/memcheck-opaque.log" 2>&1
step "memcheck opaque rc=$?"
i=0
for b in build build-opaque build build-opaque; do
	i=$((i + 1))
	left 560 || break
	timeout 40 $P bench2 dec --build $b --m 1,16,56,64 --variants wp3pdl,wpsS3,wpspdl,cublaslt --reps 4 --regimes stream \
		--watchdog 20s --json "$W/ab-$i-$b.json" >"$W/ab-$i-$b.log" 2>&1
	step "ab $i $b rc=$?"
done

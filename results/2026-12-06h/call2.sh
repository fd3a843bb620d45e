#!/usr/bin/env bash
# call2 (same machine, right after call1): the gemm gate under memcheck
# with the wps kernels instrumented (the served stream-K body, whose
# hand-off changed), then this build and edae4315 (the fence per thread)
# alternating on M = 1, 16, 56, 64 (predicted: wps and wks 2-5% faster
# here, wp3 within +-0.5%), then memcheck with wks instrumented if time
# is left. Same carry as call1.
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness.gz >$P && chmod +x $P
start=$SECONDS
left() { [ $((SECONDS - start)) -lt "$1" ]; }
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/call2.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv >"$W/smi.txt" 2>&1
rm -rf build-old && cp -r build build-old && gzip -dc build-alt/old.ptx.gz >build-old/sm_90a/gemm.ptx
md5sum build/sm_90a/gemm.ptx build-old/sm_90a/gemm.ptx >"$W/md5.txt"
timeout 230 compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wps \
	$P gate --quick --only '^gemm$' --require-device --watchdog 200s --json "$W/gate-gemm-memcheck-wps.json" >"$W/memcheck-wps.log" 2>&1
step "memcheck wps rc=$?"
i=0
for b in build build-old build build-old; do
	i=$((i + 1))
	left 520 || break
	timeout 45 $P bench2 dec --build $b --m 1,16,56,64 --variants wp3pdl,wpsS3,wpspdl,wksS4,cublaslt --reps 4 --regimes stream \
		--watchdog 20s --json "$W/ab-$i-$b.json" >"$W/ab-$i-$b.log" 2>&1
	step "ab $i $b rc=$?"
done
if left 360; then
	timeout 230 compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wks \
		$P gate --quick --only '^gemm$' --require-device --watchdog 200s --json "$W/gate-gemm-memcheck-wks.json" >"$W/memcheck-wks.log" 2>&1
	step "memcheck wks rc=$?"
fi

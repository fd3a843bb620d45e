#!/usr/bin/env bash
# Call 2: the landed tail-first hand-off (gemm.ptx md5 ecf1bbc1, a7cdda0).
# On an H200: the acceptance run (results/2026-12-06h/accept.sh) on it.
# Otherwise: ptxas -v, the static gates, the gemm gate under memcheck with
# wps instrumented (the kernels whose code changed), the full sweep of
# both regimes (targets and gemm.DecBody regret), then ncu of gate_up wps
# at M = 1, 16 on this build and on the previous one (390a4f50, in
# build-old/): call 1 had gate_up wpspdl 0.1-0.6% slower with the tail
# read first, where every tail should find its tile complete (2.1 tiles
# a block, the other block's part ends about 40 units earlier).
# Build: make kernels; the previous PTX from 4e9bbcd's gemm.hip into
# build-alt/old.ptx.gz; the binary into build-alt/parharness.gz
# (-buildvcs=true). Carry build/ and build-alt/.
set -u
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "device: $name"
case $name in *H200*) exec bash results/2026-12-06h/accept.sh ;; esac
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
timeout 60 ptxas -arch=sm_90a -v -o /tmp/g.cubin build/sm_90a/gemm.ptx >"$W/ptxas.txt" 2>&1
step "ptxas rc=$?"
timeout 60 $P gate --quick --only '^(ptxas-sm90a|sass-wgmma-hazards|sync-inventory)$' --require-device --json "$W/gate-static.json" >"$W/gate-static.log" 2>&1
step "gate static rc=$?"
timeout 240 compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wps \
	$P gate --quick --only '^gemm$' --require-device --watchdog 200s --json "$W/gate-gemm-memcheck.json" >"$W/memcheck.log" 2>&1
step "memcheck rc=$?"
timeout 190 $P bench2 dec --m 1,2,5,8,16,24,32,40,48,56,64 \
	--variants wk1S1,wk1S4,wk1pdl,wp3S3,wp3pdl,wpsS3,wpspdl,wksS4,cublaslt,read --reps 4 \
	--regimes stream,isolated --watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
step "dec rc=$?"
for e in build:1:wps_m8 build-old:1:wps_m8 build:16:wps_m16 build-old:16:wps_m16; do
	left 545 || break
	IFS=: read -r b m k <<<"$e"
	timeout 40 ncu --clock-control none --target-processes all -k "regex:^pq_gemm_dec_${k}\$" --launch-count 1 \
		--section SpeedOfLight --section WarpStateStats --section LaunchStats --section InstructionStats \
		$P bench2 dec --build $b --shapes results/2026-12-06f/shapes-gateup.txt --m $m --variants wpspdl --reps 4 --regimes stream \
		--warmup 50ms --allow-profiler >"$W/ncu-$b-m$m.txt" 2>&1
	step "ncu $b m$m rc=$?"
done

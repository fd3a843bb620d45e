#!/usr/bin/env bash
# call2: where a wk1 / wp3 round's time goes, per SASS instruction (ncu
# SourceCounters: warp stall samples by instruction) for wk1_m64 and
# wp3_m64 at M = 64 and wk1_m8 at M = 1 (qkv's problem); and the DWK_ROT
# trial (make-alt2.sh) against the default build, alternating, at M = 1,
# 16, 64 on the four shapes (each timed output checked).
# Run from the repository root with bin/, build/ and build-alt/ carried.
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/call2.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$W/smi.txt" 2>&1
md5sum build/sm_90a/gemm.ptx >"$W/md5.txt"
rm -rf build-rot && cp -r build build-rot && gzip -dc build-alt/rot.ptx.gz >build-rot/sm_90a/gemm.ptx
md5sum build-rot/sm_90a/gemm.ptx >>"$W/md5.txt"
i=0
for b in build build-rot build build-rot; do
	i=$((i + 1))
	timeout 80 $P bench2 dec --build $b --m 1,16,64 --variants wk1S1,wk1S4,cublaslt --reps 4 --regimes stream \
		--watchdog 30s --json "$W/dec-$i-$b.json" >"$W/dec-$i-$b.log" 2>&1
	step "dec $i $b rc=$?"
done
S=results/h100-2026-12-06b/planned/shapes-qkv.txt
for e in 64:wk1_m64:wk1S4 64:wp3_m64:wp3S3 1:wk1_m8:wk1S4; do
	[ $((SECONDS - start)) -lt 480 ] || break
	IFS=: read -r m k v <<<"$e"
	timeout 120 ncu --clock-control none --target-processes all -k "regex:^pq_gemm_dec_${k}\$" --launch-count 1 \
		--section SourceCounters --section WarpStateStats --section SpeedOfLight -o "$W/$k" \
		$P bench2 dec --shapes $S --m $m --variants $v --reps 4 --regimes stream --warmup 50ms --allow-profiler >"$W/ncu-$k.log" 2>&1
	step "ncu $k rc=$?"
	ncu --import "$W/$k.ncu-rep" --page source --csv --print-source sass >"$W/src-$k.csv" 2>&1
	ncu --import "$W/$k.ncu-rep" --page details >"$W/details-$k.txt" 2>&1
	gzip -9 "$W/src-$k.csv"
	rm -f "$W/$k.ncu-rep"
	step "import $k"
done

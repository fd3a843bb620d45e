#!/usr/bin/env bash
# call3: the final build of this session (wps with the segment order t0,
# t1, middle and the block range in shared memory; wp and wp3 on their
# plain loops as on main). ptxas -v (no stack or spill in any kernel; the
# SASS spill count of wps_m64), the static gates, the gemm gate under
# memcheck with every wp, wp3 and wps kernel instrumented, the acceptance
# sweep in both regimes, the gemm gate under racecheck with wps_m8 and
# wps_m64 instrumented, then old and new builds alternating if time is
# left. Predictions: wp3 within +-1% of main's build; wps as in call 2 or
# faster where a block now ends on a whole tile (gate_up), and wps_m64
# without call 2's 48-byte spill.
# Run from the repository root with build/ and build-alt/ carried
# (build-alt: this build's binary, main 3a0fa58's gemm.ptx, md5 3ef97b8a,
# and binary, gzipped; the tree travels within 64 MiB only so).
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness-new.gz >$P && chmod +x $P
start=$SECONDS
left() { [ $((SECONDS - start)) -lt "$1" ]; }
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/call3.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$W/smi.txt" 2>&1
md5sum build/sm_90a/gemm.ptx >"$W/md5.txt"
timeout 60 ptxas -arch=sm_90a -v -o /tmp/g.cubin build/sm_90a/gemm.ptx >"$W/ptxas.txt" 2>&1
step "ptxas rc=$?"
cuobjdump -sass -fun pq_gemm_dec_wps_m64 /tmp/g.cubin 2>&1 | grep -cE "STL|LDL" >"$W/wps_m64-local-ops.txt"
timeout 60 $P gate --quick --only '^(ptxas-sm90a|sass-wgmma-hazards)$' --require-device --json "$W/gate-static.json" >"$W/gate-static.log" 2>&1
step "gate static rc=$?"
timeout 290 compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wp \
	$P gate --quick --only '^gemm$' --require-device --watchdog 260s --json "$W/gate-gemm.json" >"$W/memcheck-gemm.log" 2>&1
step "memcheck gemm rc=$?"
timeout 130 $P bench2 dec --m 1,2,5,8,16,24,32,40,48,56,64 \
	--variants wk1S1,wk1S4,wk1pdl,wp3S3,wp3pdl,wpsS3,wpspdl,cublaslt --reps 4 \
	--regimes stream,isolated --watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
step "dec rc=$?"
if left 440; then
	timeout $((580 - (SECONDS - start))) compute-sanitizer --tool racecheck --kernel-name 'regex=pq_gemm_dec_wps_m(8|64)$' \
		$P gate --quick --only '^gemm$' --require-device --watchdog 200s --json "$W/gate-gemm-race.json" >"$W/racecheck-gemm.log" 2>&1
	step "racecheck gemm rc=$?"
fi
mkdir -p bin-old && gzip -dc build-alt/parharness-old.gz >bin-old/parharness && chmod +x bin-old/parharness
rm -rf build-old && cp -r build build-old && gzip -dc build-alt/old.ptx.gz >build-old/sm_90a/gemm.ptx
i=0
for b in new old; do
	i=$((i + 1))
	left 550 || break
	if [ $b = new ]; then
		timeout 25 $P bench2 dec --m 1,64 --variants wp3S3,wp3pdl,cublaslt --reps 4 --regimes stream \
			--watchdog 20s --json "$W/ab-$i-$b.json" >"$W/ab-$i-$b.log" 2>&1
	else
		timeout 25 bin-old/parharness bench2 dec --build build-old --m 1,64 --variants wp3S3,wp3pdl,cublaslt --reps 4 --regimes stream \
			--watchdog 20s --json "$W/ab-$i-$b.json" >"$W/ab-$i-$b.log" 2>&1
	fi
	step "ab $i $b rc=$?"
done

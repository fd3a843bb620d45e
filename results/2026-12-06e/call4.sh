#!/usr/bin/env bash
# call4: is call 3's racecheck report on wps_m8 (stage reads against
# writes, 13568 and 1128 hazards) the tool's view of the mbarrier and
# async-copy ring that wp3 has had since the twenty-second session? The
# gemm gate under racecheck with wp3_m8 alone instrumented; where
# wps_m64's spill sits (SASS around its local loads and stores); old and
# new builds alternating for wp3 (call 3's old run timed out at 25 s).
# Run from the repository root with build/ and build-alt/ carried.
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness-new.gz >$P && chmod +x $P
start=$SECONDS
left() { [ $((SECONDS - start)) -lt "$1" ]; }
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/call4.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv >"$W/smi.txt" 2>&1
timeout 80 compute-sanitizer --tool racecheck --kernel-name 'regex=pq_gemm_dec_wp3_m8$' \
	$P gate --quick --only '^gemm$' --require-device --watchdog 70s --json "$W/gate-gemm-race-wp3.json" >"$W/racecheck-wp3.log" 2>&1
step "racecheck wp3_m8 rc=$?"
timeout 60 ptxas -arch=sm_90a -o /tmp/g.cubin build/sm_90a/gemm.ptx >/dev/null 2>&1
cuobjdump -sass -fun pq_gemm_dec_wps_m64 /tmp/g.cubin 2>&1 | grep -n -B6 -A2 -E "STL|LDL" | head -400 >"$W/wps_m64-spills.txt"
step "sass rc=$?"
mkdir -p bin-old && gzip -dc build-alt/parharness-old.gz >bin-old/parharness && chmod +x bin-old/parharness
rm -rf build-old && cp -r build build-old && gzip -dc build-alt/old.ptx.gz >build-old/sm_90a/gemm.ptx
i=0
for b in new old new old; do
	i=$((i + 1))
	left 200 || break
	if [ $b = new ]; then
		timeout 40 $P bench2 dec --m 1,64 --variants wp3S3,wp3pdl,cublaslt --reps 4 --regimes stream \
			--watchdog 20s --json "$W/ab-$i-$b.json" >"$W/ab-$i-$b.log" 2>&1
	else
		timeout 40 bin-old/parharness bench2 dec --build build-old --m 1,64 --variants wp3S3,wp3pdl,cublaslt --reps 4 --regimes stream \
			--watchdog 20s --json "$W/ab-$i-$b.json" >"$W/ab-$i-$b.log" 2>&1
	fi
	step "ab $i $b rc=$?"
done

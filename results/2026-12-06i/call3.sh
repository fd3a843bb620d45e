#!/usr/bin/env bash
# Why wps (the stream-K split of wp3's body) is 26-37% slower than wp3 on
# qkv's problem (112 tiles, one wave 85% full) at every M: bench2
# --max-grid caps its grid. At 112 blocks every block holds one whole
# tile (one segment, no hand-off), so wps@112 against wp3 measures the
# stream-K loop itself; 116..128 add shared tiles (two segments, the
# hand-off) while cutting each block's share. The same on down's problem
# (80 tiles): 80, 100, 120 and the device's 132. Then ncu of wps at
# qkv M = 1 capped at 112 (the uncapped profile is in call1).
# Then the DSK_TRYLAST trial (build-alt/trylast.ptx.gz: clang++-19 as in
# the Makefile with -DDSK_TRYLAST=1; only the 8 wps functions differ):
# ptxas -v, alternating A/B against the landed build, and the gemm gate
# on it under memcheck with wps instrumented. Predicted for TRYLAST:
# wpspdl 0.3-0.8 us faster on qkv, down and gate_up at M = 1..64 (one L2
# round trip and the slot's store off each block's tail), wp3pdl and
# cuBLASLt unchanged.
# Predicted: wps@112 within 3% of wp3 (the loops are the same rounds);
# the cost appears with the first shared tile and grows little after.
# Build: make kernels; CGO_ENABLED=0 go build -buildvcs=true -ldflags="-s -w"
#   -o /tmp/parharness ./cmd/parharness && gzip -c /tmp/parharness >build-alt/parharness.gz
# carry build/ and build-alt/.
set -u
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness.gz >$P && chmod +x $P
start=$SECONDS
left() { [ $((SECONDS - start)) -lt "$1" ]; }
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/grid.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv >"$W/smi.txt" 2>&1
md5sum build/sm_90a/gemm.ptx >"$W/md5.txt"
rm -rf build-try && cp -r build build-try && gzip -dc build-alt/trylast.ptx.gz >build-try/sm_90a/gemm.ptx
md5sum build-try/sm_90a/gemm.ptx >>"$W/md5.txt"
timeout 60 ptxas -arch=sm_90a -v -o /tmp/t.cubin build-try/sm_90a/gemm.ptx >"$W/ptxas-try.txt" 2>&1
step "ptxas try rc=$?"
for e in qkv:0 qkv:112 down:80; do
	left 75 || break
	IFS=: read -r sh g <<<"$e"
	f=results/2026-12-06h/shapes-qkv.txt
	[ $sh = down ] && f=results/2026-12-06f/shapes-down.txt
	timeout 60 $P bench2 dec --shapes $f --max-grid $g --m 1,16,64 --variants wp3pdl,wpspdl --reps 4 --regimes stream \
		--watchdog 20s --json "$W/$sh-g$g-$SECONDS.json" >"$W/$sh-g$g-$SECONDS.log" 2>&1
	step "$sh grid $g rc=$?"
done
i=0
for b in build-try build build-try build; do
	i=$((i + 1))
	left 170 || break
	timeout 60 $P bench2 dec --build $b --m 1,16,64 --variants wp3pdl,wpspdl,cublaslt --reps 4 --regimes stream \
		--watchdog 20s --json "$W/ab-$i-$b.json" >"$W/ab-$i-$b.log" 2>&1
	step "ab $i $b rc=$?"
done
if left 200; then
	timeout 170 compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wps \
		$P gate --quick --only '^gemm$' --build build-try --require-device --watchdog 160s --json "$W/gate-gemm-memcheck-try.json" >"$W/memcheck-try.log" 2>&1
	step "memcheck try rc=$?"
fi
if left 330; then
	timeout 40 ncu --clock-control none --target-processes all -k "regex:^pq_gemm_dec_wps_m8\$" --launch-count 1 \
		--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy \
		$P bench2 dec --shapes results/2026-12-06h/shapes-qkv.txt --max-grid 112 --m 1 --variants wpspdl --reps 4 --regimes stream \
		--warmup 50ms --allow-profiler >"$W/ncu-qkv-m1-wps-g112.txt" 2>&1
	step "ncu qkv m1 wps g112 rc=$?"
fi

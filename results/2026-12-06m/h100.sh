#!/usr/bin/env bash
# The H100 fallback of this session's call.sh, for when no H200 comes: the
# quick suite's gates on the device with the new shared-memory poison
# (every gate launch after smem_fill; harness-selftest's probe), then the
# rotating M = 61 A/B against ecf1bbc1 (build-old). Same build and carry
# as call.sh. END (seconds, default 400): when the script must be done.
set -u
O=${OUT:?}
END=${END:-400}
AB=${AB:-build build-old build-old build}
W=$(mktemp -d)
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness.gz >$P && chmod +x $P
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
left() { echo $(($1 - (SECONDS - start))); }
trap 'tar -czf "$O/h100.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv >"$W/smi.txt" 2>&1
cat "$W/smi.txt"
rm -rf build-old && cp -r build build-old && gzip -dc build-alt/old.ptx.gz >build-old/sm_90a/gemm.ptx
md5sum build/sm_90a/gemm.ptx build-old/sm_90a/gemm.ptx >"$W/md5.txt"
timeout 240 $P gate --quick --require-device --watchdog 120s --json "$W/gate-quick.json" >"$W/gate-quick.log" 2>&1
step "gate quick rc=$?"
i=0
for b in $AB; do
	i=$((i + 1))
	[ "$(left $END)" -gt 40 ] || break
	timeout 35 $P bench2 dec --build $b --m 61 --variants wp3pdl,wpspdl --reps 4 --regimes stream --watchdog 20s \
		--json "$W/ab-$i-$b.json" >"$W/ab-$i-$b.log" 2>&1
	step "ab $i $b rc=$?"
done

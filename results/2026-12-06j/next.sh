#!/usr/bin/env bash
# Planned for the next session (not run: 315 s of device time were left,
# too little to start a machine). On an H200: the
# acceptance sweep alone (results/2026-12-06h/accept.sh's sweep command;
# its gates and ncu do not fit). Otherwise:
# held-out runs for DecBodySpreadM = 40 (fitted on call 2's sweep): down
# and the rest at M = 32, 40, 48, wp3 against wps, plain and PDL, both
# regimes, until 190 s. Predicted from call 2: wps 2-5% faster at M = 40
# and 48 under PDL, 2% slower at M = 32. Carry build/ and build-alt/.
# With a full session of device time, run results/2026-12-06h/accept.sh
# on an H200 instead (the gates and ncu as well).
set -u
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "device: $name"
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness.gz >$P && chmod +x $P
start=$SECONDS
left() { [ $((SECONDS - start)) -lt "$1" ]; }
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/call3.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv >"$W/smi.txt" 2>&1
md5sum build/sm_90a/gemm.ptx >"$W/md5.txt"
case $name in *H200*)
	timeout 180 $P bench2 dec --m 1,2,5,8,16,24,32,40,48,56,64 \
		--variants wk1S1,wk1S4,wk1pdl,wp3S3,wp3pdl,wpsS3,wpspdl,wksS4,cublaslt,read --reps 4 \
		--regimes stream,isolated --watchdog 30s --json "$W/dec.json" >"$W/dec.log" 2>&1
	step "dec rc=$?"
	exit 0 ;;
esac
for i in 1 2 3; do
	left 150 || break
	timeout 60 $P bench2 dec --m 32,40,48 --variants wp3S3,wp3pdl,wpsS3,wpspdl,cublaslt --reps 4 --regimes stream,isolated \
		--watchdog 20s --json "$W/spread-$i.json" >"$W/spread-$i.log" 2>&1
	step "spread $i rc=$?"
done

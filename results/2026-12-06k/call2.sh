#!/usr/bin/env bash
# Call 2 of 2026-12-06k: where the stream-K body loses time, per SASS
# instruction (ncu PC sampling, SourceCounters), on the landed build
# (gemm.ptx md5 ecf1bbc1). Call 1's cells: on qkv M = 1 wps runs 36%
# longer than wp3 (ncu, one launch) with 15% fewer bytes a block, and at
# M = 64 both bodies sit at 33-47% of DRAM and L2 peak with issue 48-60%
# active. One checked launch each (bench2 --launch-once): qkv M = 1 wps_m8
# and wp3_m8, down and gate_up M = 64 wps_m64. On an H200 it runs call
# 1 instead (the acceptance run). Build as for call 1; carry build/ and
# build-alt/.
set -u
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case $name in *H200*) exec bash results/2026-12-06k/call1.sh ;; esac
O=${OUT:?}
W=$(mktemp -d)
P=bin/parharness
mkdir -p bin && gzip -dc build-alt/parharness.gz >$P && chmod +x $P
start=$SECONDS
step() { echo "$((SECONDS - start))s $*" >>"$W/steps.txt"; }
trap 'tar -czf "$O/call2.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv >"$W/smi.txt" 2>&1
md5sum build/sm_90a/gemm.ptx >"$W/md5.txt"
ncu --version >"$W/ncu-version.txt" 2>&1
for e in qwen38-27b-tp2:1:wps_m8:wpspdl:qkv qwen38-27b-tp2:1:wp3_m8:wp3pdl:qkv \
	results/2026-12-06f/shapes-down.txt:64:wps_m64:wpspdl:down results/2026-12-06f/shapes-gateup.txt:64:wps_m64:wpspdl:gateup; do
	IFS=: read -r sh m k v tag <<<"$e"
	n=$tag-m$m-$k
	timeout 90 ncu --clock-control none --target-processes all -k "regex:^pq_gemm_dec_${k}\$" --launch-count 1 \
		--section SourceCounters --section WarpStateStats --section SpeedOfLight -f -o "$W/$n" \
		$P bench2 dec --launch-once --shapes $sh --m $m --variants $v --watchdog 60s >"$W/$n.log" 2>&1
	step "ncu $n rc=$?"
	timeout 60 ncu --import "$W/$n.ncu-rep" --page source --csv --print-source sass >"$W/$n-sass.csv" 2>"$W/$n-sass.err"
	step "source page $n rc=$?"
	timeout 60 ncu --import "$W/$n.ncu-rep" --page details >"$W/$n-details.txt" 2>&1
	step "details $n rc=$?"
	gzip "$W/$n-sass.csv"
done

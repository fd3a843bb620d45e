#!/usr/bin/env bash
# The second call of 2026-12-06i (run as one command line; kept here as
# the record): the full acceptance sweep on the gather-pipe trial build
# (dec-build-pipe.json.gz) and on the landed build (dec.json), both
# regimes, on the warm H100. Carried build/ and build-alt/ as call1.
set -u; W=$(mktemp -d); trap 'tar -czf "$OUT/sweeps.tar.gz" -C "$W" .' EXIT
mkdir -p bin && gzip -dc build-alt/parharness.gz >bin/parharness && chmod +x bin/parharness
rm -rf build-pipe && cp -r build build-pipe && gzip -dc build-alt/pipe.ptx.gz >build-pipe/sm_90a/gemm.ptx
for b in build-pipe build; do
	timeout 200 bin/parharness bench2 dec --build $b --m 1,2,5,8,16,24,32,40,48,56,64 \
		--variants wk1S1,wk1S4,wk1pdl,wp3S3,wp3pdl,wpsS3,wpspdl,wksS4,cublaslt,read --reps 4 \
		--regimes stream,isolated --watchdog 30s --json "$W/dec-$b.json" >"$W/dec-$b.log" 2>&1
	echo "$b rc=$? $SECONDS"
done

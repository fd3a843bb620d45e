#!/usr/bin/env bash
# The attribution builds wp3-call.sh times, as gzipped gemm.ptx in
# build-alt/ (ignored through .git/info/exclude; carry it): wk without the
# proxy fence before a round's bulk copy (DWK_FENCE=2) and without both
# of its fences (DWK_FENCE=0). Run from the repository root after
# `make kernels`.
set -eu
mkdir -p build-alt
rm -f build-alt/*.ptx.gz
flags="-x cuda --cuda-gpu-arch=sm_90a --cuda-device-only -nocudainc -nocudalib --cuda-feature=+ptx84 -O3 -ffp-contract=off -S -Ihipsrc -Wall -Werror"
for v in fence2:-DDWK_FENCE=2 fence0:-DDWK_FENCE=0; do
	clang++-19 $flags "${v#*:}" families/gemm/gemm.hip -o "build-alt/${v%%:*}.ptx"
	gzip -f "build-alt/${v%%:*}.ptx"
done
ls -l build-alt

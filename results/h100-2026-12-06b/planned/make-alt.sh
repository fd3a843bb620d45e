#!/usr/bin/env bash
# The trial builds merge-call.sh carries, as gzipped gemm.ptx in build-alt/
# (ignored through .git/info/exclude; carry it): DWP_PIPE=0 (each round
# waits for its own ops) and DWP_STAGES=4 (a four-stage ring). Run from the
# repository root after `make kernels`.
set -eu
mkdir -p build-alt
flags="-x cuda --cuda-gpu-arch=sm_90a --cuda-device-only -nocudainc -nocudalib --cuda-feature=+ptx84 -O3 -ffp-contract=off -S -Ihipsrc -Wall -Werror"
for v in nopipe:-DDWP_PIPE=0 d4:-DDWP_STAGES=4; do
	clang++-19 $flags "${v#*:}" families/gemm/gemm.hip -o "build-alt/${v%%:*}.ptx"
	gzip -f "build-alt/${v%%:*}.ptx"
done
ls -l build-alt

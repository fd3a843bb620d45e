#!/usr/bin/env bash
# The DWPS_OPAQUE trial build (planned, not run), as gzipped gemm.ptx in
# build-alt/ (ignored through .git/info/exclude; carry it): wps's segment
# epilogue computes its addresses at each segment's end instead of holding
# them across the rounds. Only the pq_gemm_dec_wps_* functions differ from
# the default build. Run from the repository root after `make kernels`.
set -eu
mkdir -p build-alt
rm -f build-alt/*.ptx.gz
flags="-x cuda --cuda-gpu-arch=sm_90a --cuda-device-only -nocudainc -nocudalib --cuda-feature=+ptx84 -O3 -ffp-contract=off -S -Ihipsrc -Wall -Werror"
clang++-19 $flags -DDWPS_OPAQUE=1 families/gemm/gemm.hip -o build-alt/opaque.ptx
gzip -f build-alt/opaque.ptx
ls -l build-alt

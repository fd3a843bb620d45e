#!/usr/bin/env bash
# call4's comparison build, as gzipped gemm.ptx in build-alt/ (ignored
# through .git/info/exclude; carry it): the wp copiers' index loop
# (DWP_FIXED=0), the loop the fixed-piece one replaced. Run from the
# repository root after `make kernels`.
set -eu
mkdir -p build-alt
rm -f build-alt/*.ptx.gz
flags="-x cuda --cuda-gpu-arch=sm_90a --cuda-device-only -nocudainc -nocudalib --cuda-feature=+ptx84 -O3 -ffp-contract=off -S -Ihipsrc -Wall -Werror"
clang++-19 $flags -DDWP_FIXED=0 families/gemm/gemm.hip -o build-alt/index.ptx
gzip -f build-alt/index.ptx
ls -l build-alt

#!/usr/bin/env bash
# call2's trial build, as gzipped gemm.ptx in build-alt/ (ignored through
# .git/info/exclude; carry it): wk with DWK_ROT=1 (each block starts its
# group walk b rounds in). DWK_ROT is not on main: apply rot.patch (this
# folder) first. Run from the repository root after `make kernels`.
set -eu
mkdir -p build-alt
rm -f build-alt/*.ptx.gz
flags="-x cuda --cuda-gpu-arch=sm_90a --cuda-device-only -nocudainc -nocudalib --cuda-feature=+ptx84 -O3 -ffp-contract=off -S -Ihipsrc -Wall -Werror"
clang++-19 $flags -DDWK_ROT=1 families/gemm/gemm.hip -o build-alt/rot.ptx
gzip -f build-alt/rot.ptx
ls -l build-alt

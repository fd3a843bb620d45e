#!/usr/bin/env bash
# The DWP3_PIPE trial build (planned, not run), as gzipped gemm.ptx in
# build-alt/ (ignored through .git/info/exclude; carry it): wp3's consumers
# on the pipelined loop (two temporaries and fragment sets; ptxas on the
# device says whether 152 registers hold them). Run from the repository
# root after `make kernels`.
set -eu
mkdir -p build-alt
rm -f build-alt/*.ptx.gz
flags="-x cuda --cuda-gpu-arch=sm_90a --cuda-device-only -nocudainc -nocudalib --cuda-feature=+ptx84 -O3 -ffp-contract=off -S -Ihipsrc -Wall -Werror"
clang++-19 $flags -DDWP3_PIPE=1 families/gemm/gemm.hip -o build-alt/pipe3.ptx
gzip -f build-alt/pipe3.ptx
ls -l build-alt

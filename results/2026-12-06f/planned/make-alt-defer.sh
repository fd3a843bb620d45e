#!/usr/bin/env bash
# The DWPS_DEFER trial build (planned, not run): gzipped gemm.ptx and this
# tree's binary in build-alt/ (ignored through .git/info/exclude; carry
# it). Only the pq_gemm_dec_wps_* functions differ from the default build
# (checked on the PTX when the knob was written). Run from the repository
# root after `make kernels`.
set -eu
mkdir -p build-alt
rm -f build-alt/*.gz
flags="-x cuda --cuda-gpu-arch=sm_90a --cuda-device-only -nocudainc -nocudalib --cuda-feature=+ptx84 -O3 -ffp-contract=off -S -Ihipsrc -Wall -Werror"
clang++-19 $flags -DDWPS_DEFER=1 families/gemm/gemm.hip -o build-alt/defer.ptx
gzip -f build-alt/defer.ptx
CGO_ENABLED=0 go build -buildvcs=true -ldflags="-s -w" -o /tmp/parharness ./cmd/parharness
gzip -c /tmp/parharness >build-alt/parharness.gz
ls -l build-alt

#!/usr/bin/env bash
# The two trial builds of call 1 (gzipped gemm.ptx each) and this tree's
# binary, in build-alt/ (ignored through .git/info/exclude; carry it). Run
# from the repository root after `make kernels`. DWPS_DEFER was removed
# from gemm.hip after call 1: from a later tree, defer.ptx is the default.
set -eu
mkdir -p build-alt
rm -f build-alt/*.gz
flags="-x cuda --cuda-gpu-arch=sm_90a --cuda-device-only -nocudainc -nocudalib --cuda-feature=+ptx84 -O3 -ffp-contract=off -S -Ihipsrc -Wall -Werror"
for t in defer:DWPS_DEFER release:DSK_RELEASE; do
	clang++-19 $flags -D${t#*:}=1 families/gemm/gemm.hip -o build-alt/${t%%:*}.ptx
	gzip -f build-alt/${t%%:*}.ptx
done
CGO_ENABLED=0 go build -buildvcs=true -ldflags="-s -w" -o /tmp/parharness ./cmd/parharness
gzip -c /tmp/parharness >build-alt/parharness.gz
ls -l build-alt

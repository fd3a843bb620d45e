#!/usr/bin/env bash
# scripts/broken-variant.sh OUTDIR: a build directory whose pq_rot_bf16_lr
# (a pass-A variant) has a wrong loop index: its layer loop stops one
# layer early, so it does 7/8 of the rotation work and writes wrong rows.
# Every other kernel is the normal build. It proves on a device that the
# benches check what they time:
#   scripts/broken-variant.sh /tmp/broken
#   bin/parharness bench2 rot --build /tmp/broken --m 2048
# must report passA-lr FAIL (not timed, no verdict) and exit 1, while the
# same command on build/ reports every variant PASS.
set -euo pipefail
[ $# -le 1 ] || { echo "usage: scripts/broken-variant.sh [OUTDIR (default build-broken)]" >&2; exit 2; }
cd "$(dirname "$0")/.."
out=${1:-build-broken}
make -s kernels
rm -rf "$out" && mkdir -p "$out" && cp -r build/. "$out/"
src=families/producers/producers.hip
bug='for (u32 e = 0; e < KROT * 64; e += 4) {'
[ "$(grep -cF "$bug" "$src")" = 1 ] || { echo "broken-variant: the pq_rot_bf16_lr layer loop is not in $src as expected" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed "s/for (u32 e = 0; e < KROT \* 64; e += 4) {/for (u32 e = 0; e < (KROT - 1) * 64; e += 4) {/" "$src" >"$tmp/producers.hip"
cmp -s "$src" "$tmp/producers.hip" && { echo "broken-variant: the edit did not apply" >&2; exit 1; }
flags() { make -s --no-print-directory --eval='print-%: ; @echo $($*)' "print-$1"; }
flags_nv=$(flags NVFLAGS)
flags_amd=$(flags AMDFLAGS)
clang=${CLANG:-clang++-19}
# shellcheck disable=SC2086
$clang $flags_nv -Ifamilies/producers "$tmp/producers.hip" -o "$out/sm_90a/producers.ptx"
# shellcheck disable=SC2086
$clang $flags_amd -Ifamilies/producers "$tmp/producers.hip" -o "$out/gfx1201/producers.co"
echo "broken-variant: $out holds the normal build with pq_rot_bf16_lr's layer loop cut to 7 layers"

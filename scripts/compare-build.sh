#!/usr/bin/env bash
# scripts/compare-build.sh REV: build the kernels of git revision REV in a
# scratch worktree and compare them with this tree's `make kernels`: every
# sm_90a PTX file byte for byte (cmp), every gfx1201 code object by its
# disassembly (llvm-objdump-19 -d; the ELF embeds a symbol derived from the
# build path, so its bytes differ between two directories). Exit 0 when all
# are the same; a refactor that must not change the kernels runs this
# against its base.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: scripts/compare-build.sh REV" >&2; exit 2; }
cd "$(dirname "$0")/.."
rev=$(git rev-parse --verify "$1^{commit}")
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/base" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add --detach "$tmp/base" "$rev" >/dev/null
make -s kernels
make -s -C "$tmp/base" kernels
dis() { llvm-objdump-19 -d --mcpu=gfx1201 "$1" | tail -n +3; }
diffs=0
for f in "$tmp"/base/build/sm_90a/*.ptx; do
  b=$(basename "$f")
  if [ ! -f "build/sm_90a/$b" ]; then echo "only in $rev: sm_90a/$b"; diffs=1
  elif cmp -s "$f" "build/sm_90a/$b"; then echo "same  sm_90a/$b"
  else echo "DIFF  sm_90a/$b"; diffs=1; fi
done
for f in "$tmp"/base/build/gfx1201/*.co; do
  b=$(basename "$f")
  if [ ! -f "build/gfx1201/$b" ]; then echo "only in $rev: gfx1201/$b"; diffs=1
  elif diff -q <(dis "$f") <(dis "build/gfx1201/$b") >/dev/null; then echo "same  gfx1201/$b (disassembly)"
  else echo "DIFF  gfx1201/$b (disassembly)"; diffs=1; fi
done
for f in build/sm_90a/*.ptx build/gfx1201/*.co; do
  [ -f "$tmp/base/$f" ] || { echo "only here: $f"; diffs=1; }
done
exit $diffs

#!/usr/bin/env bash
# scripts/badinput.sh: show what the harness says for each kind of bad input
# on this machine's device: a missing, corrupt, wrong-arch or symbol-less code
# object, no GPU, and a kernel that never returns. Each case prints the
# harness's line and its exit code; the script fails if any case exits 0 or
# does not say what it should.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=./bin/parharness
arch=$($bin devices | sed -n 's|^arch .*build/\([^)]*\)).*|\1|p')
arch=${arch:-sm_90a}
ext=ptx; [ "${arch#gfx}" != "$arch" ] && ext=co
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # name want-regex command...
  local name=$1 want=$2; shift 2
  out=$("$@" 2>&1); rc=$?
  line=$(printf '%s\n' "$out" | grep -E "$want" | head -1)
  if [ $rc -ne 0 ] && [ -n "$line" ]; then echo "ok   $name (exit $rc): $line"
  else echo "BAD  $name (exit $rc): expected /$want/"; printf '%s\n' "$out" | tail -5; fail=1; fi
}
gate() { $bin gate --only '^e4m3-device-decode$' --require-device --build "$1"; }

mkdir -p "$tmp/missing/$arch"
check missing-object "is missing" gate "$tmp/missing"

mkdir -p "$tmp/corrupt/$arch"
head -c 600 "build/$arch/e4m3.$ext" > "$tmp/corrupt/$arch/e4m3.$ext"
check corrupt-object "refused|not a readable" gate "$tmp/corrupt"

mkdir -p "$tmp/wrongarch/$arch"
if [ "$ext" = ptx ]; then sed 's/^\.target sm_90a/.target sm_80/' "build/$arch/e4m3.ptx" > "$tmp/wrongarch/$arch/e4m3.ptx"
else cp build/gfx1201/e4m3.co "$tmp/wrongarch/$arch/e4m3.co"; fi
check wrong-arch "is PTX for sm_80|is a code object for" gate "$tmp/wrongarch"

mkdir -p "$tmp/nosym/$arch"
sed 's/e4m3_decode_all/e4m3_decode_XXX/g' "build/$arch/e4m3.$ext" > "$tmp/nosym/$arch/e4m3.$ext"
check missing-symbol "symbol not found" gate "$tmp/nosym"

check no-gpu "SKIP|no GPU device" $bin gate --only '^e4m3-device-decode$' --backend none --require-device
check hung-kernel "watchdog:.*did not return" timeout 60 $bin selftest hang --watchdog 3s
exit $fail

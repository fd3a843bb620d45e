#!/usr/bin/env bash
# scripts/device-verify.sh OUTDIR [STEP...]: the runs that verify a build on
# a GPU, in the order that keeps a fault in one kernel from hiding the rest:
# the quick suite first, then the full producers gate, then a bench whose
# broken variant (scripts/broken-variant.sh) must be reported FAIL, then
# the checked benches.
# Needs bin/parharness and build/ (make kernels bin); writes OUTDIR/*.json
# and OUTDIR/*.log and keeps going past a failing step, exiting 1 if any
# step failed (the broken step passes when its bench exits 1 naming the
# broken variant). STEPs (default: all, in this order) pick some, so the
# runs can be split across calls of a time-limited remote runner:
#   quick producers-full broken rot grpq pre dec
set -uo pipefail
if [ $# -lt 1 ]; then echo "usage: scripts/device-verify.sh OUTDIR [STEP...]" >&2; exit 2; fi
mkdir -p "$1" && out=$(cd "$1" && pwd) || exit 2 # absolute: the script runs from the repository root
shift
cd "$(dirname "$0")/.."
all="quick producers-full broken rot grpq pre dec"
want=" ${*:-$all} "
for w in $want; do
  case " $all " in *" $w "*) ;; *) echo "device-verify: unknown step $w (steps: $all)" >&2; exit 2 ;; esac
done
bin=./bin/parharness
[ -x "$bin" ] || { echo "device-verify: $bin missing: run 'make kernels bin' where Go and clang-19 are" >&2; exit 2; }
failed=0
step() { # step NAME CMD...: run, log, note the status (when NAME was asked for)
  local name=$1; shift
  case "$want" in *" $name "*) ;; *) return 0 ;; esac
  echo "== $name: $*"
  if "$@" >"$out/$name.log" 2>&1; then echo "   ok"; else echo "   FAILED (exit $?), see $out/$name.log"; failed=1; fi
  tail -n 3 "$out/$name.log" | sed 's/^/   | /'
}
step quick "$bin" gate --quick --require-device --json "$out/quick.json"
step producers-full "$bin" gate --full --require-device --only '^producers$' --json "$out/producers-full.json"
# The broken build: pq_rot_bf16_lr cut to 7 layers. bench2 must exit 1 and
# name passA-lr FAIL; the other variants stay checked and timed.
broken() {
  local dir=build-broken # made by scripts/broken-variant.sh where clang-19 is (the GPU host may lack it)
  [ -d "$dir" ] || scripts/broken-variant.sh "$dir" || return 2
  "$bin" bench2 rot --build "$dir" --m 2048 --json "$out/broken-rot.json"
  local rc=$?
  [ $rc -eq 1 ] && grep -q 'FAIL rot/passA/.*variant=passA-lr' "$out/broken.log"
}
step broken broken
step rot "$bin" bench2 rot --m 2048,8192 --json "$out/rot.json"
step grpq "$bin" bench2 grpq --m 1,8 --json "$out/grpq.json"
step pre "$bin" bench2 pre --json "$out/pre.json"
step dec "$bin" bench2 dec --json "$out/dec.json"
exit $failed

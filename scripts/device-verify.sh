#!/usr/bin/env bash
# scripts/device-verify.sh OUTDIR [STEP...]: the runs that verify on a GPU what was
# committed without one (see results/h200-2026-11-29/README.md, "Not run on
# the H200"), in the order that keeps a fault in a new kernel from hiding the
# rest: the quick suite first, then the new shuffle-routed pass A alone, then
# the benches whose files in results/ predate the current build.
# Needs bin/parharness and build/ (make kernels bin); writes OUTDIR/*.json
# and OUTDIR/*.log and keeps going past a failing step, exiting 1 if any
# step failed. STEPs (default: all, in this order) pick some, so the runs
# can be split across calls of a time-limited remote runner:
#   quick producers-full rotsh ncu-rotsh grpq pre dec
set -uo pipefail
if [ $# -lt 1 ]; then echo "usage: scripts/device-verify.sh OUTDIR [STEP...]" >&2; exit 2; fi
mkdir -p "$1" && out=$(cd "$1" && pwd) || exit 2 # absolute: the script runs from the repository root
shift
cd "$(dirname "$0")/.."
all="quick producers-full rotsh ncu-rotsh grpq pre dec"
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
step rotsh "$bin" bench2 rotsh --m 2048,8192 --json "$out/rotsh.json"
# The shuffle-routed pass A's modelled limit is the ALU pipe (10 selects per
# lane and layer) and the shuffles: check which pipe binds.
NCU_METRICS=smsp__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,smsp__inst_executed_op_shfl.sum \
  step ncu-rotsh scripts/ncu.sh '^pq_rot_bf16_sh$' bench2 rotsh --m 8192 --reps 4 --variants passA-sh
step grpq "$bin" bench2 grpq --m 1,8 --json "$out/grpq.json"
step pre "$bin" bench2 pre --json "$out/pre.json"
step dec "$bin" bench2 dec --json "$out/dec.json"
exit $failed

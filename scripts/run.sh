#!/usr/bin/env bash
# scripts/run.sh: build what is missing, then run the harness.
#   scripts/run.sh --quick [gate flags]      the CI gate (quick suite)
#   scripts/run.sh --full  [gate flags]      quick gates plus exhaustive sweeps
#   scripts/run.sh --bench2 SUITE [flags]    a bench suite sweep
# Results JSON goes to results/<kind>-<date>.json unless --json is given.
# Needs Go (CGO_ENABLED=0) and, for kernels, clang-19 (Debian: clang-19 lld-19 llvm-19);
# without them it runs the bin/ and build/ already there, and says so.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:---quick}
shift || true

if command -v clang++-19 >/dev/null 2>&1; then
  make -s kernels
else
  echo "run.sh: clang++-19 not found: kernels not rebuilt (install clang-19 lld-19 llvm-19); device gates will report what is missing" >&2
fi
if command -v go >/dev/null 2>&1; then
  CGO_ENABLED=0 go build -buildvcs=auto -o bin/parharness ./cmd/parharness
elif [ -x bin/parharness ]; then
  echo "run.sh: go not found: using the existing bin/parharness (built elsewhere, e.g. carried to a GPU machine)" >&2
else
  echo "run.sh: go not found and no bin/parharness: install Go (https://go.dev/dl) or build bin/parharness elsewhere with 'make bin'" >&2
  exit 1
fi

stamp=$(date -u +%Y%m%dT%H%M%SZ)
json=()
case " $* " in *" --json "*) ;; *) mkdir -p results/runs; json=(--json "results/runs/${mode#--}-$stamp.json") ;; esac

# On a machine with a GPU device node, a device gate that cannot run is a
# failure, not a SKIP: a broken driver must not turn the gate green.
req=()
if [ -e /dev/nvidiactl ] || [ -e /dev/kfd ]; then req=(--require-device); fi

case "$mode" in
  --quick|--full) exec ./bin/parharness gate "$mode" "${req[@]}" "${json[@]}" "$@" ;;
  --bench2)
    suite=${1:?usage: scripts/run.sh --bench2 SUITE [flags]}; shift
    exec ./bin/parharness bench2 "$suite" "${json[@]}" "$@" ;;
  *) echo "usage: scripts/run.sh --quick|--full|--bench2 SUITE [flags]" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# scripts/cluster/slurm-sweep.sh: one bench2 sweep split over a Slurm job
# array, one GPU per array task, each task measuring its shard.
#
#   sbatch scripts/cluster/slurm-sweep.sh           the shards only (merge later)
#   scripts/cluster/slurm-sweep.sh submit [OPTS]    on the login node: the shards,
#                                                   then a merge job that waits for them
#   OUTDIR=DIR scripts/cluster/slurm-sweep.sh merge merge DIR's shards now (after a rerun)
#
# OPTS are passed to both sbatch calls (e.g. --partition=gpu --account=me).
# Submit from the repository root (the jobs run there), with bin/ and build/
# on a file system the compute nodes see. Settings come from the environment:
#   SUITE=pre ARGS='--m 1,8 --reps 20' scripts/cluster/slurm-sweep.sh submit
#
# The number of shards N is the array size, and the indices must be
# 0..N-1: change --array below, or override it with `sbatch --array=0-7 ...`,
# or in submit mode set N=8. To rerun one shard of an N=4 sweep into the same
# directory: sbatch --array=2 --export=ALL,N=4,OUTDIR=results/runs/sweep-1234 \
#   scripts/cluster/slurm-sweep.sh   (N is needed: that array has one task).
#
#SBATCH --job-name=parharness-sweep
#SBATCH --array=0-3
#SBATCH --gpus=1
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=4
# A dec sweep takes minutes per shard; raise this for long --shapes sets.
#SBATCH --time=02:00:00
# One log per task, in the submit directory (Slurm does not create folders,
# and OUTDIR is not known when these lines are read). %A job, %a task.
#SBATCH --output=parharness-sweep-%A_%a.out
# SIGINT to the batch shell (the harness, after exec) 120 s before the time
# limit, rather than only SIGTERM then SIGKILL at it: a harness that stops
# on SIGINT can still write its file as partial, which merge then names.
#SBATCH --signal=B:INT@120

set -euo pipefail

SUITE=${SUITE:-dec}
ARGS=${ARGS:-}                          # extra bench2 flags, split on spaces
OUTDIR_GIVEN=${OUTDIR:+yes}             # submit mode must not fix the default
OUTDIR=${OUTDIR:-results/runs/sweep-${SLURM_ARRAY_JOB_ID:-}}
PARHARNESS=${PARHARNESS:-./bin/parharness}
N=${N:-}                                # shard count; default: the array size

die() { echo "slurm-sweep.sh: $*" >&2; exit 2; }

# One array task: shard SLURM_ARRAY_TASK_ID of N.
run_shard() {
  [ -n "${SLURM_ARRAY_TASK_ID:-}" ] ||
    die "not an array task: submit with 'sbatch $0' or run '$0 submit'"
  local i=$SLURM_ARRAY_TASK_ID
  # An explicit N wins: a rerun of one task has SLURM_ARRAY_TASK_COUNT=1.
  local n=${N:-${SLURM_ARRAY_TASK_COUNT:-}}
  [ -n "$n" ] || die "SLURM_ARRAY_TASK_COUNT is unset (Slurm before 20.x?): set N to the shard count"
  [ "$i" -lt "$n" ] || die "task $i is not a shard of $n: array indices must be 0..N-1 (rerunning one task? set N)"
  [ -x "$PARHARNESS" ] || die "$PARHARNESS is not an executable here ($(pwd)): set PARHARNESS"
  mkdir -p "$OUTDIR"
  # No file from an earlier run of this shard outlives a run that fails to start.
  rm -f "$OUTDIR/shard-$i.json"
  local extra=()
  read -r -a extra <<<"$ARGS"
  echo "shard $i/$n of $SUITE on $(hostname), CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-} HIP_VISIBLE_DEVICES=${HIP_VISIBLE_DEVICES:-}, into $OUTDIR" >&2
  # exec: the harness's exit code (0 pass, 1 a check failed, 2 could not run)
  # is the task's, and --signal above reaches it. ${a[@]+...}: bash < 4.4
  # calls an empty array unset under set -u.
  exec "$PARHARNESS" bench2 "$SUITE" ${extra[@]+"${extra[@]}"} \
    --shard "$i/$n" --json "$OUTDIR/shard-$i.json"
}

# Merge the shard files of OUTDIR (the merge job, or by hand).
run_merge() {
  [ -n "${OUTDIR_GIVEN}${SLURM_ARRAY_JOB_ID:-}" ] || die "set OUTDIR to the sweep's directory"
  [ -x "$PARHARNESS" ] || die "$PARHARNESS is not an executable here ($(pwd)): set PARHARNESS"
  # No nullglob: with no shard file, merge names the unmatched pattern.
  exec "$PARHARNESS" merge "$OUTDIR/merged.json" "$OUTDIR"/shard-*.json
}

# On the login node: the array, then a merge job after every task succeeded.
run_submit() {
  command -v sbatch >/dev/null 2>&1 || die "sbatch not found: run this on a Slurm login node"
  [ -x "$PARHARNESS" ] || die "$PARHARNESS is not an executable here ($(pwd)): set PARHARNESS"
  local n=${N:-4}
  case $n in '' | *[!0-9]* | 0) die "N=$n: want a positive integer" ;; esac
  local script
  script=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
  # The tasks read these from the environment (--export=ALL).
  export SUITE ARGS PARHARNESS N="$n"
  if [ -n "$OUTDIR_GIVEN" ]; then export OUTDIR; else unset OUTDIR; fi
  local out jobid
  out=$(sbatch --parsable --export=ALL --chdir="$PWD" --array="0-$((n - 1))" "$@" "$script")
  jobid=${out%%;*} # --parsable prints "jobid" or "jobid;cluster"
  # Without OUTDIR the tasks wrote to the default, which has the job id in it.
  [ -n "$OUTDIR_GIVEN" ] || OUTDIR=results/runs/sweep-$jobid
  export OUTDIR PARHARNESS_SWEEP_SCRIPT="$script"
  # The merge job is a script on stdin, so it does not take this file's
  # #SBATCH lines (array, GPU). afterok: it runs only if every task exited
  # 0; a shard that failed its check (exit 1) or could not run (2) holds the
  # merge back, and --kill-on-invalid-dep cancels it instead of leaving it
  # pending. afterany instead would merge whatever files there are.
  out=$(sbatch --parsable --export=ALL --chdir="$PWD" --job-name=parharness-merge \
    --ntasks=1 --time=00:15:00 --output=parharness-merge-%j.out \
    --dependency="afterok:$jobid" --kill-on-invalid-dep=yes "$@" <<'MERGE'
#!/usr/bin/env bash
set -euo pipefail
exec bash "$PARHARNESS_SWEEP_SCRIPT" merge
MERGE
  )
  echo "shards: job $jobid (array 0-$((n - 1))), merge: job ${out%%;*}, into $OUTDIR"
  echo "watch with: squeue -j $jobid,${out%%;*}; result: $OUTDIR/merged.json"
}

case ${1:-} in
  submit) shift; run_submit "$@" ;;
  merge) run_merge ;;
  '') run_shard ;;
  *) die "unknown mode '$1': none (an array task), submit [sbatch options], or merge" ;;
esac

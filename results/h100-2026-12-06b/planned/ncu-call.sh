#!/usr/bin/env bash
# The per-M limiter profiles issue 17 asks for: ncu (scripts/ncu.sh, clocks
# left alone) on qkv alone (planned/shapes-qkv.txt) for each PLAN entry
# M:variant:kernel, e.g. PLAN="1:wk1S4:wk1_m8 64:wpS2:wp_m64". One tarball back.
set -u
O=${OUT:?}
W=$(mktemp -d)
start=$SECONDS
trap 'tar -czf "$O/ncu-call.tar.gz" -C "$W" .; cat "$W/steps.txt"' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >"$W/smi.txt" 2>&1
export NCU_METRICS=sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.max,smsp__inst_executed.sum
for e in ${PLAN:?}; do
	IFS=: read -r m v k <<<"$e"
	[ $((SECONDS - start)) -lt 520 ] || break
	timeout 75 scripts/ncu.sh "^pq_gemm_dec_${k}\$" bench2 dec --shapes results/h100-2026-12-06b/planned/shapes-qkv.txt \
		--m "$m" --variants "$v" --reps 4 --regimes stream --warmup 50ms --allow-profiler >"$W/ncu-qkv-$k-M$m.txt" 2>&1
	echo "$((SECONDS - start))s $e rc=$?" >>"$W/steps.txt"
done

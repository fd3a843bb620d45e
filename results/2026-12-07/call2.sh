#!/usr/bin/env bash
# Second call of 2026-12-07 on the machine call.sh found: every quick gate
# on build/ (the landed tree), then memcheck of the landed wp bodies at
# every deployed M (one checked launch a cell) if time is left. END
# (default 560).
set -u
END=${END:-560}
. scripts/devcall.sh call2
ALLM=1,2,5,8,16,24,32,40,48,56,64
timeout 380 $P gate --quick --require-device --watchdog 120s --json "$W/gate-quick.json" >"$W/gate-quick.log" 2>&1
step "gate quick rc=$?"
l=$(left $END)
[ "$l" -gt 60 ] || exit 0
timeout $((l - 10)) compute-sanitizer --tool memcheck --kernel-name kns=pq_gemm_dec_wp \
	$P bench2 dec --launch-once --m $ALLM --variants wp3pdl,wpspdl,wp3S3,wpsS3 --reps 4 \
	--watchdog 120s >"$W/memcheck-landed.log" 2>&1
step "memcheck landed wp rc=$?"

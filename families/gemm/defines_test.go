package gemm

import (
	"os"
	"testing"

	"github.com/parharness/parharness/internal/cdefs"
	"github.com/parharness/parharness/refimpl"
)

// Every Go constant that mirrors a gemm.hip #define equals it: a change on
// one side must reach the other (geometry, shared-memory sizes).
func TestGoConstantsMatchKernelDefines(t *testing.T) {
	src, err := os.ReadFile("gemm.hip")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range cdefs.Mismatches("gemm.hip", src, map[string]int64{
		"GROUP": refimpl.GroupSize, "DEC_BN": DecBN, "DEC_WARPS": DecThreads / 32,
		"PRE_BM": PreBM, "PRE_BN": PreBN, "PRE_THREADS": PreThreads, "PRE_GM": PreRasterGroup,
		"DWG_SMEM_8": int64(DecShared("pq_gemm_dec_wg_m8", 8, 1)), "DWG_SMEM_16": int64(DecShared("pq_gemm_dec_wg_m16", 16, 1)),
		"DWG_SMEM_32": int64(DecShared("pq_gemm_dec_wg_m32", 32, 1)), "DWG_SMEM_64": int64(DecShared("pq_gemm_dec_wg_m64", 64, 1)),
		"DKS_R": DecKSRing, "DKS_MAXS": DecKSMaxS, "DKS_ROW": decKSRow,
		"DWK_MAXS": DecWKMaxS, "DWP_COPIERS": wpCopiers,
		"PW_STAGES": preWGStages, "PW_STAGE_BYTES": preWGStageBytes, "PW_THREADS": preWGThreads, "PW_SMEM": preWGShared,
	}) {
		t.Error(m)
	}
}

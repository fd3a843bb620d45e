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
	defs := cdefs.Ints(src)
	for _, c := range []struct {
		name string
		want int64
	}{
		{"GROUP", refimpl.GroupSize},
		{"DEC_BN", DecBN},
		{"DEC_WARPS", DecThreads / 32},
		{"PRE_BM", PreBM},
		{"PRE_BN", PreBN},
		{"PRE_THREADS", PreThreads},
		{"PW_STAGES", preWGStages},
		{"PW_STAGE_BYTES", preWGStageBytes},
		{"PW_THREADS", preWGThreads},
		{"PW_SMEM", preWGShared},
	} {
		got, ok := defs[c.name]
		if !ok {
			t.Errorf("gemm.hip: no integer #define %s", c.name)
		} else if got != c.want {
			t.Errorf("%s is %d in gemm.hip, %d on the Go side", c.name, got, c.want)
		}
	}
}

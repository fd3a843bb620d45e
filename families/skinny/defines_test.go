package skinny

import (
	"os"
	"testing"

	"github.com/parharness/parharness/internal/cdefs"
)

// Every Go constant that mirrors a skinny.hip #define equals it: the
// launch geometry and the mirror's op order follow the kernel's.
func TestGoConstantsMatchKernelDefines(t *testing.T) {
	src, err := os.ReadFile("skinny.hip")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range cdefs.Mismatches("skinny.hip", src, map[string]int64{
		"SLICE": Slice, "RED_BATCH": RedBatch, "SK_THREADS": Threads, "SK_WARPS": Threads / 32, "LANE_K": LaneK, "SK_ROWS": Rows,
		"CL_MAXM": ClusterMaxM, "CL_JMAX": ClusterMaxJ, "CL_THREADS": ClusterThreads, "CL_WARPS": ClusterThreads / 32,
	}) {
		t.Error(m)
	}
}

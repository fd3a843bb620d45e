package normrot

import (
	"os"
	"testing"

	"github.com/parharness/parharness/internal/cdefs"
)

// Every Go constant that mirrors a #define of normrot.hip equals it.
func TestGoConstantsMatchKernelDefines(t *testing.T) {
	src, err := os.ReadFile("normrot.hip")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range cdefs.Mismatches("normrot.hip", src, map[string]int64{"NR_MAXK": MaxK, "NR_DECODE_WARPS": DecodeWarps}) {
		t.Error(m)
	}
}

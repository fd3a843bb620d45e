package producers

import (
	"os"
	"testing"

	"github.com/parharness/parharness/internal/cdefs"
	"github.com/parharness/parharness/refimpl"
)

// Every Go constant that mirrors a producers.hip #define equals it.
func TestGoConstantsMatchKernelDefines(t *testing.T) {
	src, err := os.ReadFile("producers.hip")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range cdefs.Mismatches("producers.hip", src, map[string]int64{
		"GROUP": Group, "KROT": refimpl.DefaultKrot, "WARPS": ProducerWarps, "MAXK": ProducerMaxK,
	}) {
		t.Error(m)
	}
}

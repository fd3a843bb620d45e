package producers

import (
	"os"
	"testing"

	"github.com/parharness/parharness/internal/cdefs"
	"github.com/parharness/parharness/refimpl"
)

// Every Go constant that mirrors a #define of producers.hip or of the
// shared header hipsrc/rot/rotq.h equals it.
func TestGoConstantsMatchKernelDefines(t *testing.T) {
	for file, want := range map[string]map[string]int64{
		"producers.hip":           {"WARPS": ProducerWarps, "MAXK": ProducerMaxK},
		"../../hipsrc/rot/rotq.h": {"GROUP": Group, "KROT": refimpl.DefaultKrot},
	} {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range cdefs.Mismatches(file, src, want) {
			t.Error(m)
		}
	}
}

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
	defs := cdefs.Ints(src)
	for _, c := range []struct {
		name string
		want int64
	}{
		{"GROUP", Group},
		{"KROT", refimpl.DefaultKrot},
		{"WARPS", ProducerWarps},
		{"MAXK", ProducerMaxK},
	} {
		got, ok := defs[c.name]
		if !ok {
			t.Errorf("producers.hip: no integer #define %s", c.name)
		} else if got != c.want {
			t.Errorf("%s is %d in producers.hip, %d on the Go side", c.name, got, c.want)
		}
	}
}

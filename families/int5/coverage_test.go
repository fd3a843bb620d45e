package int5

import (
	"strings"
	"testing"

	"github.com/parharness/parharness/families/internal/faketest"
	"github.com/parharness/parharness/families/internal/grid1d"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/internal/coverage"
)

// Every launch class of int5_unpack_list, the family's guarded kernel (one
// block or several, the last block full or partial), has a launch in the
// quick suite, read from the launches the quick device gates make on a
// fake device; every such launch has the grid its element count needs.
// (int5_unpack_sweep and int5_code_table have a fixed geometry.)
func TestQuickSuiteCoversEveryLaunchClass(t *testing.T) {
	const kernel = "int5_unpack_list"
	env, dev := faketest.Env(t, faketest.Targets(50 << 20)[0])
	env.Full = false // the quick suite's launches
	for _, g := range gates.Select(gates.Quick, nil) {
		if g.Family == Family && g.Device {
			gates.RunGate(env, g)
		}
	}
	var have [][]string
	for _, l := range dev.Launches {
		if l.Kernel != kernel {
			continue
		}
		c, err := grid1d.LaunchClass(l.Kernel, int(l.Grid.X), int(l.Block.X), l.Args)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(c, "grid-mismatch") {
			t.Errorf("a launch whose grid does not cover its elements exactly: %s", c)
		}
		have = append(have, []string{c})
	}
	if miss := coverage.Missing(grid1d.Classes(kernel), have); len(miss) > 0 {
		t.Errorf("launch classes with no quick launch: %q (have %v)", miss, have)
	}
}

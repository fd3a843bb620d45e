package e4m3

import (
	"strings"
	"testing"

	"github.com/parharness/parharness/families/internal/faketest"
	"github.com/parharness/parharness/families/internal/grid1d"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/internal/coverage"
)

// guarded are the kernels of this family that run one thread per element
// behind an `i < n` guard (grid1d's geometry); the others have a fixed
// geometry (e4m3_sweep's 2^19 threads, e4m3_decode_all's one block of 256).
var guarded = []string{"e4m3_encode_list", "e4m3_encode_range", "pack_lanes"}

// Every launch class of every guarded kernel (one block or several, the
// last block full or partial) has a launch in the quick suite, read from
// the launches the quick device gates make on a fake device (the gates'
// own geometry, not a copy of it); every launch of a guarded kernel has
// the grid its element count needs.
func TestQuickSuiteCoversEveryLaunchClass(t *testing.T) {
	info := faketest.Targets(50 << 20)[0]
	env, dev := faketest.Env(t, info)
	env.Full = false // the quick suite's launches
	for _, g := range gates.Select(gates.Quick, nil) {
		if g.Family == Family && g.Device {
			gates.RunGate(env, g)
		}
	}
	isGuarded := map[string]bool{}
	for _, k := range guarded {
		isGuarded[k] = true
	}
	var have [][]string
	for _, l := range dev.Launches {
		if !isGuarded[l.Kernel] {
			continue
		}
		c, err := grid1d.LaunchClass(l.Kernel, int(l.Grid.X), int(l.Block.X), l.Args)
		if err != nil {
			t.Fatal(err)
		}
		have = append(have, []string{c})
	}
	for _, k := range guarded {
		t.Run(k, func(t *testing.T) {
			if miss := coverage.Missing(grid1d.Classes(k), have); len(miss) > 0 {
				t.Errorf("launch classes with no quick launch: %q (have %v)", miss, have)
			}
		})
	}
	for _, cs := range have {
		if strings.Contains(cs[0], "grid-mismatch") {
			t.Errorf("a launch whose grid does not cover its elements exactly: %s", cs[0])
		}
	}
}

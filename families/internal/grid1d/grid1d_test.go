package grid1d

import (
	"slices"
	"testing"

	"github.com/parharness/parharness/internal/coverage"
)

func TestClass(t *testing.T) {
	for _, c := range []struct {
		grid, n int
		want    string
	}{
		{1, 100, "k blocks=one last=partial"},
		{1, 256, "k blocks=one last=full"},
		{3, 513, "k blocks=several last=partial"},
		{2, 512, "k blocks=several last=full"},
		{2, 513, "k grid-mismatch (grid 2, block 256, n 513)"},
		{3, 512, "k grid-mismatch (grid 3, block 256, n 512)"},
	} {
		if got := Class("k", c.grid, Block, c.n); got != c.want {
			t.Errorf("grid %d n %d: %q, want %q", c.grid, c.n, got, c.want)
		}
	}
}

// Whatever a gate already launches, the counts Cover adds reach every class.
func TestCoverReachesEveryClass(t *testing.T) {
	for _, have := range [][]int{nil, {1 << 20}, {1<<22 + 1234}, {77}, {256, 512}} {
		add := Cover("k", have...)
		var got [][]string
		for _, n := range append(slices.Clone(have), add...) {
			got = append(got, []string{Class("k", Grid(n), Block, n)})
		}
		if miss := coverage.Missing(Classes("k"), got); len(miss) > 0 {
			t.Errorf("have %v, added %v: missing %v", have, add, miss)
		}
		if len(add)+len(have) > 4+len(have) {
			t.Errorf("have %v: added %v, more than the classes", have, add)
		}
	}
	if add := Cover("k", 100, 256, 513, 512); len(add) != 0 {
		t.Errorf("every class launched: added %v", add)
	}
}

package coverage

import (
	"slices"
	"testing"
)

func TestCoverPicksCheapestForEachClass(t *testing.T) {
	// candidate i reaches these classes at this cost
	cls := [][]string{{"a"}, {"a", "b"}, {"b"}, {"c"}, {"c", "d"}}
	cost := []float64{1, 5, 2, 1, 10}
	added, reach := Cover([]int{0}, len(cls), func(i int) []string { return cls[i] }, func(i int) float64 { return cost[i] })
	if want := []int{3, 2, 4}; !slices.Equal(added, want) {
		t.Errorf("added %v, want %v", added, want)
	}
	if want := []string{"a", "b", "c", "d"}; !slices.Equal(reach, want) {
		t.Errorf("reachable %v, want %v", reach, want)
	}
	have := [][]string{cls[0]}
	for _, i := range added {
		have = append(have, cls[i])
	}
	if m := Missing(reach, have); len(m) != 0 {
		t.Errorf("missing after cover: %v", m)
	}
	if m := Missing(reach, [][]string{cls[0]}); !slices.Equal(m, []string{"b", "c", "d"}) {
		t.Errorf("Missing = %v", m)
	}
}

// Extend adds the cheapest domain values that reach the classes base
// misses, marked in rank order; Union keeps each class once, in order.
func TestExtendAndUnion(t *testing.T) {
	type c struct {
		cls  []string
		cost float64
		tag  int
	}
	base := []c{{cls: []string{"a"}, cost: 1}}
	dom := []c{{cls: []string{"a", "b"}, cost: 5}, {cls: []string{"b"}, cost: 2}, {cls: []string{"c"}, cost: 3}, {cls: []string{"a"}, cost: 0}}
	got := Extend(base, dom, func(x c) []string { return x.cls }, func(x c) float64 { return x.cost }, func(r int, x c) c { x.tag = r + 1; return x })
	if len(got) != 2 || got[0].cls[0] != "b" || got[0].tag != 1 || got[1].cls[0] != "c" || got[1].tag != 2 {
		t.Errorf("Extend: %+v", got)
	}
	if u := Union([]string{"x", "y"}, nil, []string{"y", "z", "x"}); !slices.Equal(u, []string{"x", "y", "z"}) {
		t.Errorf("Union: %v", u)
	}
}

// Reachable is the sorted union over a domain; Of keeps case order;
// Unnamed reports each required name no class contains, and only those.
func TestReachableOfUnnamed(t *testing.T) {
	dom := [][]string{{"k threads=32", "oddG=true"}, {"k threads=256"}, {"oddG=true"}}
	id := func(x []string) []string { return x }
	t.Run("Reachable", func(t *testing.T) {
		if got := Reachable(dom, id); !slices.Equal(got, []string{"k threads=256", "k threads=32", "oddG=true"}) {
			t.Errorf("got %v", got)
		}
	})
	have := Of(dom[:1], id)
	t.Run("Of", func(t *testing.T) {
		if len(have) != 1 || !slices.Equal(have[0], dom[0]) {
			t.Errorf("got %v", have)
		}
	})
	t.Run("Unnamed", func(t *testing.T) {
		if got := Unnamed(have, "threads=32", "threads=256", "oddG", "padded"); !slices.Equal(got, []string{"threads=256", "padded"}) {
			t.Errorf("got %v", got)
		}
		if got := Unnamed(have); got != nil {
			t.Errorf("no names: %v", got)
		}
	})
	if got := Missing(Reachable(dom, id), have); !slices.Equal(got, []string{"k threads=256"}) {
		t.Errorf("Missing: %v", got)
	}
}

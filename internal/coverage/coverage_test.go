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

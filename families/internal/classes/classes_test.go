package classes

import (
	"slices"
	"testing"

	"github.com/parharness/parharness/kernels"
)

// Every code arch is asked, every kernel's classes are kept once, and a
// kernel whose classes are nil adds nothing.
func TestUnion(t *testing.T) {
	var asked []string
	got := Union(func(arch string) []kernels.Kernel {
		asked = append(asked, arch)
		return []kernels.Kernel{{Name: "a"}, {Name: "skip"}, {Name: "b"}}
	}, func(k kernels.Kernel) []string {
		switch k.Name {
		case "a":
			return []string{"x", "y"}
		case "b":
			return []string{"y", "z"}
		}
		return nil
	})
	if !slices.Equal(asked, kernels.CodeArchs) {
		t.Errorf("asked %v, want every code arch %v", asked, kernels.CodeArchs)
	}
	for _, c := range []string{"x", "y", "z"} {
		if !slices.Contains(got, c) {
			t.Errorf("class %s missing from %v", c, got)
		}
	}
	if len(got) != 3 {
		t.Errorf("%v: want each class once", got)
	}
}

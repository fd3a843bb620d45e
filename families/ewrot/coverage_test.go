package ewrot

import (
	"strings"
	"testing"

	"github.com/parharness/parharness/internal/coverage"
)

// Every launch class an ewrot kernel reaches over the class domain (each
// op's deployed shapes, the synthetic ones, M = 1..ClassMaxM; enumerated
// from the launch functions, independently of how the cases are chosen)
// has a case in each suite.
func TestSuitesCoverEveryLaunchClass(t *testing.T) {
	for _, full := range []bool{false, true} {
		name := map[bool]string{false: "quick", true: "full"}[full]
		t.Run(name, func(t *testing.T) {
			reach := coverage.Reachable(ClassDomain(), func(c Case) []string { return CaseClasses(c, full) })
			have := coverage.Of(Cases(full), func(c Case) []string { return CaseClasses(c, full) })
			if miss := coverage.Missing(reach, have); len(miss) > 0 {
				t.Fatalf("%d of %d launch classes have no %s case, e.g. %q", len(miss), len(reach), name, miss[0])
			}
			// By name: multi-warp decode blocks, tiled padding, odd G, P > 1,
			// and every mode in both producer forms.
			for _, want := range coverage.Unnamed(have, "ew_rotq_group threads=256", "padded=true", "oddG=true", "P=>1",
				"ew_rotq_group threads=32 rpw=1 chunks=many partial=false gated-norm", "ew_rotq_token rows=many padded=true silu-mul", "ew_op_bf16 chunks=many partial=true sigmoid-gate") {
				t.Errorf("no %s case has a launch class containing %q", name, want)
			}
			t.Logf("%s: %d cases reach all %d classes", name, len(have), len(reach))
		})
	}
}

// The classes follow the geometry: one-warp and multi-warp decode blocks
// differ, and so do modes.
func TestLaunchClassesFollowGeometry(t *testing.T) {
	one, _ := LaunchClasses("ew_rotq_group", 64, 8704, 1, SiluMul)
	multi, _ := LaunchClasses("ew_rotq_group", 65, 8704, 1, SiluMul)
	other, _ := LaunchClasses("ew_rotq_group", 64, 8704, 1, GatedNorm)
	if one[0] == multi[0] || one[0] == other[0] || !strings.Contains(multi[0], "threads=256 rpw=4") {
		t.Errorf("M=64 %q, M=65 %q, gated norm %q", one[0], multi[0], other[0])
	}
	if _, err := LaunchClasses("pq_rotq_group", 1, 128, 1, SiluMul); err == nil {
		t.Error("a producers kernel: no error")
	}
}

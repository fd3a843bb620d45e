package normrot

import (
	"strings"
	"testing"

	"github.com/parharness/parharness/internal/coverage"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/regret"
)

// Every launch-geometry class a normrot kernel reaches over the norm-fed
// shapes, the synthetic ones and M = 1..ClassMaxM has a case in each suite.
func TestSuitesCoverEveryLaunchClass(t *testing.T) {
	for _, full := range []bool{false, true} {
		name := map[bool]string{false: "quick", true: "full"}[full]
		t.Run(name, func(t *testing.T) {
			reach := coverage.Reachable(ClassDomain(), func(c normCase) []string { return CaseClasses(c, full) })
			have := coverage.Of(gateCases(full), func(c normCase) []string { return CaseClasses(c, full) })
			if miss := coverage.Missing(reach, have); len(miss) > 0 {
				t.Fatalf("%d of %d launch classes have no %s case, e.g. %q", len(miss), len(reach), name, miss[0])
			}
			for _, want := range coverage.Unnamed(have, "pq_addnorm_rotq_group blocks/row=one", "idle=true", "oddG=true", "padded=true", TokenKernel(32)+" strides=one") {
				t.Errorf("no %s case has a launch class containing %q", name, want)
			}
			t.Logf("%s: %d cases reach all %d classes", name, len(have), len(reach))
		})
	}
}

// The classes follow the geometry: the decode kernel's blocks per row and
// idle warps, the per-token kernels' stride count.
func TestLaunchClassesFollowGeometry(t *testing.T) {
	one, _ := LaunchClasses("pq_addnorm_rotq_group", 3, 1024, 1) // 8 items: one full block
	many, _ := LaunchClasses("pq_addnorm_rotq_group", 3, 5120, 3)
	if !strings.Contains(one[0], "blocks/row=one idle=false") || !strings.Contains(many[0], "blocks/row=many idle=false") {
		t.Errorf("decode classes %q, %q", one, many)
	}
	if c, _ := LaunchClasses("pq_addnorm_rotq_group", 2, 640, 1); !strings.Contains(c[0], "idle=true") {
		t.Errorf("K=640 P=1 (5 items): %q", c)
	}
	if c, _ := LaunchClasses(TokenKernel(32), 17, 5120, 2); !strings.Contains(c[0], "strides=many padded=true") {
		t.Errorf("w32 K=5120: %q", c)
	}
	if _, err := LaunchClasses("pq_rotq_group", 1, 128, 1); err == nil {
		t.Error("another family's kernel: no error")
	}
}

// The law's rule, as the source log states it.
func TestWavesPerRow(t *testing.T) {
	for _, c := range []struct{ M, K, want int }{{1, 5120, 32}, {16, 5120, 32}, {17, 5120, 16}, {64, 5120, 16}, {65, 5120, 8}, {8192, 5120, 8}, {65, 8192, 16}, {4096, 12288, 16}, {16, 8192, 32}} {
		if got := WavesPerRow(c.M, c.K); got != c.want {
			t.Errorf("WavesPerRow(%d, %d) = %d, want %d", c.M, c.K, got, c.want)
		}
	}
}

// The law reads back every shape the suite writes, and nothing else.
func FuzzParseShape(f *testing.F) {
	for _, s := range []string{"K5120xP3", "K8192xP2", "K5120xP", "KxP3", "K05120xP3", "K5120xP3x", "5120xP3", "K-1xP2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		K, P, ok := parseShape(s)
		if ok != (s == shapeName(K, P) && K > 0 && P > 0) {
			t.Fatalf("parseShape(%q) = %d, %d, %t", s, K, P, ok)
		}
	})
}

// The law's pick for a cell: WavesPerRow's on gfx1201, on sm_90a 16 warps
// while M·P blocks fit one per SM (132 on the H200), else 8; no pick for a
// shape it cannot read.
func TestLawPicks(t *testing.T) {
	for _, c := range []struct {
		arch, shape string
		M           int
		want        string
	}{{kernels.GFX1201, "K5120xP3", 8, "w32"}, {kernels.SM90a, "K5120xP3", 8, "w16"}, {kernels.GFX1201, "K5120xP2", 40, "w16"},
		{kernels.SM90a, "K5120xP2", 64, "w16"}, {kernels.SM90a, "K5120xP3", 64, "w8"}, {kernels.SM90a, "K8192xP2", 512, "w8"},
		{kernels.SM90a, "K5120xP3", 65, "w8"}, {kernels.GFX1201, "K8192xP2", 65, "w16"}, {kernels.GFX1201, "gate_up", 8, ""}} {
		if got := lawWaves(c.arch, 132)(regret.Cell{Shape: c.shape, M: c.M}); got != c.want {
			t.Errorf("%s %s M=%d: %q, want %q", c.arch, c.shape, c.M, got, c.want)
		}
	}
}

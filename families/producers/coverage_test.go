package producers

import (
	"strings"
	"testing"

	"github.com/parharness/parharness/internal/coverage"
	"github.com/parharness/parharness/kernels"
)

// Every launch-geometry class a producer reaches over the deployed shapes,
// the odd-G shapes and M = 1..ClassMaxM (enumerated from the launch
// functions, independently of how the cases are chosen) has a case in each
// suite. The escape this closes: a bug confined to the decode-band
// producer's multi-warp blocks (M 65..128) passed a quick suite whose
// decode cases all had one-warp blocks.
func TestSuitesCoverEveryLaunchClass(t *testing.T) {
	for _, full := range []bool{false, true} {
		name := map[bool]string{false: "quick", true: "full"}[full]
		t.Run(name, func(t *testing.T) {
			reach := coverage.Reachable(ClassDomain(), func(c producerCase) []string { return CaseClasses(c, full) })
			have := coverage.Of(producerCases(full), func(c producerCase) []string { return CaseClasses(c, full) })
			if miss := coverage.Missing(reach, have); len(miss) > 0 {
				t.Fatalf("%d of %d launch classes have no %s case, e.g. %q", len(miss), len(reach), name, miss[0])
			}
			// The known escape, by name: multi-warp decode-band blocks, a
			// partial last chunk, and odd G all run.
			for _, want := range coverage.Unnamed(have, "pq_rotq_group threads=256", "partial=true", "oddG=true") {
				t.Errorf("no %s case has a launch class containing %q", name, want)
			}
			t.Logf("%s: %d cases reach all %d classes", name, len(have), len(reach))
		})
	}
}

// The classes come from the launch geometry: a change of block shape or
// rows per warp changes the class.
func TestLaunchClassesFollowGeometry(t *testing.T) {
	one, _ := LaunchClasses("pq_rotq_group", 64, 5120, 3)
	multi, _ := LaunchClasses("pq_rotq_group", 65, 5120, 3)
	if one[0] == multi[0] || !strings.Contains(one[0], "threads=32") || !strings.Contains(multi[0], "threads=256 rpw=4") {
		t.Errorf("M=64 %q, M=65 %q", one[0], multi[0])
	}
	if c, _ := LaunchClasses("pq_rot_bf16", 1025, 640, 1); !strings.Contains(c[0], "rpw=16") || !strings.Contains(c[0], "partial=true") || !strings.Contains(c[0], "oddG=true") {
		t.Errorf("M=1025 K=640: %q", c[0])
	}
	if _, err := LaunchClasses("no_such_kernel", 1, 128, 1); err == nil {
		t.Error("unknown kernel: no error")
	}
}

// The law of the per-group producer names registered kernels of the
// group Op serving M: the PG form on gfx1201 and at sm_90a prefill M, the
// plain form in the sm_90a decode band.
func TestGroupProducerLaw(t *testing.T) {
	for _, c := range []struct {
		arch string
		M    int
		want string
	}{{"gfx1201", 8, "pq_rotq_group_sh"}, {"gfx1201", 2048, "pq_rotq_group_sh"}, {"sm_90a", 8, "pq_rotq_group"},
		{"sm_90a", GroupMaxM, "pq_rotq_group"}, {"sm_90a", GroupMaxM + 1, "pq_rotq_group_sh"}, {"sm_90a", 2048, "pq_rotq_group_sh"}} {
		got := GroupProducer(c.arch, c.M)
		k, ok := kernels.Lookup(got)
		if got != c.want || !ok || k.Op != OpGroup || !k.ForArch(c.arch) || !k.ServesM(c.M) {
			t.Errorf("%s M=%d: %s (registered %v, op %q), want %s", c.arch, c.M, got, ok, k.Op, c.want)
		}
	}
	// The PG form runs at prefill M, where the plain one's registry row stops.
	if ks := kernels.Select(kernels.Query{Family: Family, Op: OpGroup, M: 4096, Arch: "sm_90a", Roles: []kernels.Role{kernels.Variant}}); len(ks) != 1 || ks[0].Name != "pq_rotq_group_sh" {
		t.Errorf("group-Op variants at M=4096: %v, want the PG producer", ks)
	}
}

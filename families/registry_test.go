// Package families_test checks the kernel registry as the families fill
// it: every row's source exists and names the kernel, both targets' code
// objects declare the same parameters, each Op has a baseline for every M
// it is launched at, and tags are unique where bench rows are keyed by
// them.
package families_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	_ "github.com/parharness/parharness/families/all"
	"github.com/parharness/parharness/kernels"
)

// Every registered kernel's source is in its family's folder and names it.
func TestRegistrySources(t *testing.T) {
	if len(kernels.All()) == 0 {
		t.Fatal("no kernels registered")
	}
	for _, k := range kernels.All() {
		src, err := os.ReadFile(filepath.Join("..", k.Source()))
		if err != nil {
			t.Errorf("kernel %s: %v", k.Name, err)
			continue
		}
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(k.Name) + `\b`).Match(src) {
			t.Errorf("kernel %s is registered but %s never names it", k.Name, k.Source())
		}
	}
}

// Within a family and Op: at most one baseline serves any M on any target
// (BaselineFor is unambiguous), every variant's M range is served by a
// baseline, and no two kernels share a tag (bench rows are named by it).
func TestRegistryContracts(t *testing.T) {
	type fo struct{ family, op string }
	byOp := map[fo][]kernels.Kernel{}
	for _, k := range kernels.All() {
		byOp[fo{k.Family, k.Op}] = append(byOp[fo{k.Family, k.Op}], k)
	}
	for key, ks := range byOp {
		tags := map[string]string{}
		for _, k := range ks {
			// Kernels of one tag are one variant split by M range (the decode
			// classes): their ranges must not overlap.
			if other, dup := tags[k.Tag]; dup {
				o, _ := kernels.Lookup(other)
				if overlaps(o, k) {
					t.Errorf("%s/%s: %s and %s share tag %q and an M", key.family, key.op, other, k.Name, k.Tag)
				}
			}
			tags[k.Tag] = k.Name
		}
		for _, arch := range kernels.CodeArchs {
			for _, k := range ks {
				if !k.ForArch(arch) {
					continue
				}
				for _, M := range probeMs(k) {
					if _, err := kernels.BaselineFor(key.family, key.op, M, arch); err != nil {
						t.Errorf("%s (%s) at M=%d on %s: %v", k.Name, k.Role, M, arch, err)
					}
				}
			}
		}
	}
}

func overlaps(a, b kernels.Kernel) bool {
	for _, M := range probeMs(a) {
		if b.ServesM(M) {
			return true
		}
	}
	return false
}

// probeMs are the ends of a kernel's M range (1 and a large M when open).
func probeMs(k kernels.Kernel) []int {
	lo, hi := max(k.MinM, 1), k.MaxM
	if hi == 0 {
		hi = 1 << 16
	}
	return []int{lo, hi, (lo + hi) / 2}
}

// Every registered kernel's signature reads from both targets' code objects
// (where `make kernels` built them), and the two targets declare the same
// parameter widths: one source, one argument list.
func TestBuiltSignaturesAgreeAcrossTargets(t *testing.T) {
	read := func(arch, module string) map[string]kernels.Signature {
		img, err := os.ReadFile(kernels.ObjectPath("../build", arch, module))
		if err != nil {
			t.Skipf("%v (run make kernels)", err)
		}
		sigs, err := kernels.Signatures(img, arch)
		if err != nil {
			t.Fatalf("%s %s: %v", arch, module, err)
		}
		return sigs
	}
	modules, _ := kernels.ByModule("sm_90a") // every module has sm_90a kernels
	for _, mod := range modules {
		nv, amd := read("sm_90a", mod), read("gfx1201", mod)
		for _, k := range kernels.All() {
			if k.Module != mod {
				continue
			}
			sa, okA := nv[k.Name]
			sb, okB := amd[k.Name]
			if sa.Err != nil || sb.Err != nil {
				t.Errorf("%s: unreadable parameters: %v / %v", k.Name, sa.Err, sb.Err)
				continue
			}
			a, b := sa.Params, sb.Params
			if !okA && k.ForArch("sm_90a") || !okB && k.ForArch("gfx1201") {
				t.Errorf("%s: missing from a code object (sm_90a %v, gfx1201 %v)", k.Name, okA, okB)
				continue
			}
			if !okA || !okB {
				continue
			}
			if len(a) != len(b) {
				t.Errorf("%s: %d parameters on sm_90a, %d on gfx1201", k.Name, len(a), len(b))
				continue
			}
			for i := range a {
				if a[i].Bytes != b[i].Bytes {
					t.Errorf("%s parameter %d: %v on sm_90a, %v on gfx1201", k.Name, i, a[i], b[i])
				}
			}
		}
	}
}

package i8

import (
	"os"
	"testing"

	"github.com/parharness/parharness/families/gemm"
	"github.com/parharness/parharness/internal/cdefs"
	"github.com/parharness/parharness/internal/coverage"
)

// Every launch class an I8 producer reaches over the deployed shapes, the
// odd-G shapes and M = 1..prodClassMaxM, and every class an I8 GEMM
// reaches over the gate's shapes and M = 1..64 at the gate's splits, has a
// case in each suite.
func TestSuitesCoverEveryLaunchClass(t *testing.T) {
	for _, full := range []bool{false, true} {
		name := map[bool]string{false: "quick", true: "full"}[full]
		t.Run("producers/"+name, func(t *testing.T) {
			reach := coverage.Reachable(prodClassDomain(), func(c prodCase) []string { return prodCaseClasses(c, full) })
			have := coverage.Of(prodCases(full), func(c prodCase) []string { return prodCaseClasses(c, full) })
			if miss := coverage.Missing(reach, have); len(miss) > 0 {
				t.Fatalf("%d of %d classes have no case, e.g. %q", len(miss), len(reach), miss[0])
			}
			for _, want := range coverage.Unnamed(have, "pq_i8_group threads=256", "partial=true", "oddG=true", "padded=true", "pq_i8_token") {
				t.Errorf("no case has a class containing %q", want)
			}
		})
		t.Run("gemm/"+name, func(t *testing.T) {
			for _, sms := range []int{gemm.H200SMs, 64} {
				dom, err := gemmClassDomain(full)
				if err != nil {
					t.Fatal(err)
				}
				reach := coverage.Reachable(dom, func(c gemmCase) []string { return gemmCaseClasses(c, sms) })
				cases, err := gemmCases(full, sms)
				if err != nil {
					t.Fatal(err)
				}
				var have [][]string
				dists := map[string]bool{}
				for _, c := range cases {
					have = append(have, gemmCaseClasses(c, sms))
					dists[c.dist] = true
				}
				if miss := coverage.Missing(reach, have); len(miss) > 0 {
					t.Fatalf("SMs=%d: %d of %d classes have no case, e.g. %q", sms, len(miss), len(reach), miss[0])
				}
				for _, d := range gemmDists {
					if !dists[d] {
						t.Errorf("SMs=%d: no case with %s activations", sms, d)
					}
				}
			}
		})
	}
}

// Every Go constant that mirrors a #define of the I8 sources equals it.
func TestGoConstantsMatchKernelDefines(t *testing.T) {
	for file, want := range map[string]map[string]int64{
		"i8prod.hip":                 {"WARPS": Warps, "MAXK": MaxK},
		"i8gemm.hip":                 {"DEC_BN": DecBN, "AR_CAP": ARCap},
		"../../hipsrc/i8/i8q.h":      {"I8MAX": Int8Max},
		"../producers/producers.hip": {"WARPS": Warps, "MAXK": MaxK},
	} {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range cdefs.Mismatches(file, src, want) {
			t.Error(m)
		}
	}
}

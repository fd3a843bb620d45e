package skinny

import (
	"fmt"
	"testing"

	"github.com/parharness/parharness/internal/coverage"
)

// Every launch class the gate's shapes reach over M = 1..MaxM (enumerated
// from the launch function, independently of how the cases are chosen)
// has a case in each suite.
func TestSuitesCoverEveryLaunchClass(t *testing.T) {
	shs, err := gateShapes()
	if err != nil {
		t.Fatal(err)
	}
	for _, full := range []bool{false, true} {
		t.Run(fmt.Sprintf("full=%t", full), func(t *testing.T) {
			seen := map[string]bool{}
			for _, c := range classDomain(shs) {
				for _, cl := range caseClasses(c, full) {
					seen[cl] = true
				}
			}
			var reach []string
			for cl := range seen {
				reach = append(reach, cl)
			}
			cases, err := gateCases(full)
			if err != nil {
				t.Fatal(err)
			}
			var have [][]string
			for _, c := range cases {
				have = append(have, caseClasses(c, full))
			}
			if miss := coverage.Missing(reach, have); len(miss) > 0 {
				t.Fatalf("%d of %d launch classes have no case, e.g. %q", len(miss), len(reach), miss[0])
			}
			if len(reach) < 10 {
				t.Errorf("only %d classes: %v", len(reach), reach)
			}
			t.Logf("%d cases reach all %d classes", len(cases), len(reach))
		})
	}
}

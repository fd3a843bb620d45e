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
			reach := coverage.Reachable(classDomain(shs), func(c gateCase) []string { return caseClasses(c, full) })
			cases, err := gateCases(full)
			if err != nil {
				t.Fatal(err)
			}
			have := coverage.Of(cases, func(c gateCase) []string { return caseClasses(c, full) })
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

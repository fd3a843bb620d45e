package producers

import (
	"math"
	"testing"
)

// The per-token case CI's fresh seed found (seed 1795973176834468029, K=8704
// subnormal row, k=350): y = -4.66e-41 is 0.51 bf16 subnormal steps, pass A
// rounds it to one step (9.18e-41), and e4m3 rounds that to 9.59e-41 in units
// of the row scale. The old bound took the e4m3 step of y, not of the bf16
// value, and failed a correct producer.
func TestSemanticsTolBF16Subnormal(t *testing.T) {
	y, got := 4.66089147136338e-41, 9.592448507689103e-41
	// The row scale: 9.59e-41 is a code of the row, so s <= got/2^-9.
	s := 4.9e-39 / 448
	tol := semanticsTol(y, s, 2e-43, true)
	if d := math.Abs(got - y); d > tol {
		t.Fatalf("correct rounding chain rejected: |diff| %g > tol %g", d, tol)
	}
	// A code one e4m3 step too high (2^-3 relative) on a normal value fails,
	// with or without the bf16 step.
	for _, bf := range []bool{false, true} {
		y := 1.0
		tol := semanticsTol(y, 1.0/448*2, 1e-7, bf)
		if wrong := y * (1 + 0.125); math.Abs(wrong-y) <= tol {
			t.Errorf("viaBF16=%v: one e4m3 step off accepted (tol %g)", bf, tol)
		}
		if right := y * (1 + 1.0/16); math.Abs(right-y) > tol {
			t.Errorf("viaBF16=%v: half an e4m3 step rejected (tol %g)", bf, tol)
		}
	}
}

package wgmmaacc

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/parharness/parharness/families/internal/faketest"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/results"
)

// Every operand is an e4m3 value, and in the exact cases every partial sum
// the op can form (any order of the products) is an integer below 2^14, so
// a 14-bit accumulator holds it exactly.
func TestCasesAreWhatTheyClaim(t *testing.T) {
	for _, c := range Cases(7) {
		t.Run(c.Label(), func(t *testing.T) {
			if len(c.A) != c.Steps*Rows*K || len(c.B) != c.Steps*Cols*K || c.Steps < 1 || c.Steps > MaxSteps {
				t.Fatalf("sizes %d, %d for %d steps", len(c.A), len(c.B), c.Steps)
			}
			for _, v := range slices.Concat(c.A, c.B) {
				if e4m3Value(v) != v {
					t.Fatalf("%v is not an e4m3 value", v)
				}
			}
			if !c.Exact {
				return
			}
			_, mag := c.Sums()
			for i, m := range mag {
				if m >= 1<<14 {
					t.Fatalf("output %d: magnitude %v: partial sums may not fit 14 bits", i, m)
				}
			}
			for _, v := range slices.Concat(c.A, c.B) {
				if v != float32(math.Trunc(float64(v))) {
					t.Fatalf("%v is not an integer", v)
				}
			}
		})
	}
}

// truncate14 keeps x's 14 leading significant bits (toward zero).
func truncate14(x float64) float64 {
	if x == 0 {
		return 0
	}
	e := math.Ilogb(x)
	q := math.Ldexp(1, e-13)
	return math.Trunc(x/q) * q
}

// A device that follows the model (each step's accumulator truncated to 14
// bits) passes; one that is exact passes with worst 0 in the exact cases;
// planted errors fail: an exact case off by the least step, an error past
// the bound, NaN.
func TestJudge(t *testing.T) {
	for _, c := range Cases(11) {
		sum, mag := c.Sums()
		model := make([]float32, Rows*Cols)
		for r := 0; r < Rows; r++ {
			for n := 0; n < Cols; n++ {
				acc := 0.0
				for s := 0; s < c.Steps; s++ {
					step := 0.0
					for k := 0; k < K; k++ {
						step += float64(c.A[(s*Rows+r)*K+k]) * float64(c.B[(s*Cols+n)*K+k])
					}
					acc = truncate14(acc + step)
				}
				model[r*Cols+n] = float32(acc)
			}
		}
		exact := make([]float32, len(sum))
		for i, v := range sum {
			exact[i] = float32(v)
		}
		t.Run(c.Label()+"/model", func(t *testing.T) {
			if w, err := Judge(c, model); err != nil || w > 1 { // the 14-bit model stays inside its own unit
				t.Fatalf("the model's own device: worst %v, %v", w, err)
			}
		})
		t.Run(c.Label()+"/exact", func(t *testing.T) {
			w, err := Judge(c, exact)
			if err != nil && !c.Exact {
				t.Fatalf("exact outputs: %v", err)
			}
			if c.Exact && (err != nil || w != 0) {
				t.Fatalf("exact case: worst %v, %v", w, err)
			}
		})
		i := 17
		unit := StepBound * mag[i] * float64(c.Steps)
		for _, p := range []struct {
			name string
			v    float32
			fail bool
		}{
			{"within", float32(sum[i] + 0.5*unit), c.Exact},
			{"past", float32(sum[i] + 1.5*unit + 1), true},
			{"nan", float32(math.NaN()), true},
		} {
			t.Run(c.Label()+"/"+p.name, func(t *testing.T) {
				got := slices.Clone(exact)
				got[i] = p.v
				_, err := Judge(c, got)
				if (err != nil) != p.fail {
					t.Fatalf("planted %v (exact %v, unit %v): err %v, want failure %v", p.v, sum[i], unit, err, p.fail)
				}
			})
		}
	}
}

// Every case's metric key is one the results file takes (a case name
// holding '=' once made the device run record no metric at all), and no
// two cases share one.
func TestCaseMetricKeys(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Cases(7) {
		key := c.MetricKey()
		if err := results.CheckMetricKey(key); err != nil {
			t.Errorf("%s: %v", c.Label(), err)
		}
		if seen[key] {
			t.Errorf("%s: key %s repeats", c.Label(), key)
		}
		seen[key] = true
	}
}

// On the fake devices (which run nothing): the gate launches the probe and
// fails on the untouched, poisoned output where the probe exists (sm_90a),
// and SKIPs with its reason elsewhere.
func TestGateOnFakeDevices(t *testing.T) {
	i := slices.IndexFunc(gates.All(), func(g gates.Gate) bool { return g.Name == "wgmma-acc" })
	if i < 0 {
		t.Fatal("gate wgmma-acc not registered")
	}
	g := gates.All()[i]
	k, _ := kernels.Lookup(Kernel)
	for _, info := range faketest.Targets(1 << 20) {
		t.Run(info.Arch, func(t *testing.T) {
			env, dev := faketest.Env(t, info)
			res := gates.RunGate(env, g)
			if bad := faketest.ArgumentErrors(res); len(bad) > 0 {
				t.Fatalf("argument errors: %v", bad)
			}
			if !slices.Contains(k.Targets, info.CodeArch()) {
				if res.Status != gates.Skip || !strings.Contains(res.Reason, "runs on") {
					t.Fatalf("%s (%s), want SKIP naming the probe's target", res.Status, res.Reason)
				}
				return
			}
			if res.Status != gates.Fail {
				t.Fatalf("a device that computes nothing got %s (%s)", res.Status, res.Reason)
			}
			// It fails on the outputs, not on the gate's own bookkeeping.
			for _, f := range res.Failures {
				if strings.Contains(f, "gate bug") {
					t.Fatalf("the gate itself failed: %s", f)
				}
			}
			if !slices.Contains(dev.Kernels(), Kernel) {
				t.Fatalf("the gate did not launch %s (ran %v)", Kernel, dev.Kernels())
			}
		})
	}
}

package normrot

import (
	"slices"
	"strings"
	"testing"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/families/internal/faketest"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/results"
	"github.com/parharness/parharness/shapes"
)

// The gate on a fake device (internal/faketest): every launch's arguments
// match the compiled kernel's declared parameters on both targets, every
// registered normrot kernel runs (and the unfused chain's producers), and
// a device that computes nothing fails.

var fakeTargets = faketest.Targets(1 << 20)

func TestGateRunsEveryRegisteredKernel(t *testing.T) {
	for _, info := range fakeTargets {
		t.Run(info.Arch, func(t *testing.T) {
			env, dev := faketest.Env(t, info)
			res := gates.RunGate(env, gates.Gate{Name: "normrot-launches", Device: true, Run: func(t *gates.T) {
				for _, M := range []int{5, 200} {
					c := normCase{K: 384, P: 2, M: M, dist: "normal"}
					in, err := prepareCase(uint64(M), c)
					t.Check(err, "inputs")
					runCase(t, c, 1, in)
					t.Release()
				}
			}})
			if bad := faketest.ArgumentErrors(res); len(bad) > 0 {
				t.Errorf("argument errors: %v", bad)
			}
			if res.Status != gates.Fail {
				t.Errorf("a device that runs nothing got %s from the normrot checks", res.Status)
			}
			want := append(faketest.Registered(Family, info, kernels.Baseline, kernels.Variant), "pq_rotq_group", "pq_rotq_token")
			if miss := faketest.Missing(want, dev.Kernels()); len(miss) > 0 {
				t.Errorf("kernels the gate never ran: %v (ran %v)", miss, dev.Kernels())
			}
			if ran := slices.Contains(dev.Kernels(), TokenKernel(32)); ran != (MaxWaves(info.CodeArch()) >= 32) {
				t.Errorf("the 32-warp per-token kernel ran: %t, on %s whose largest block is %d warps", ran, info.CodeArch(), MaxWaves(info.CodeArch()))
			}
		})
	}
}

// tinyShapes is a shapes set with one norm-fed shape (K=256, P=2) and a
// linear that is not norm-fed (which the suites must not time).
func tinyShapes(t *testing.T) *shapes.Set {
	s, err := shapes.Parse("tiny", strings.NewReader("model tiny\ntp 1\nlinear attn_qkv K=256 N=128+128 kind=w4a8\nlinear mlp_down K=384 N=256 kind=w4a8\n"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Every registered normrot kernel (and the unfused chain's producers) is
// timed by one of the family's suites, every variant is declared, and on a
// device that computes nothing every record is FAIL and untimed.
func TestBenchTimesEveryRegisteredKernel(t *testing.T) {
	for _, info := range fakeTargets {
		t.Run(info.Arch, func(t *testing.T) {
			c, dev := faketest.Ctx(t, info, tinyShapes(t), []int{8, 200})
			for _, s := range bench.FamilySuites(Family) {
				c.Suite = s.Name
				if err := s.Run(c); err != nil {
					t.Fatalf("suite %s: %v", s.Name, err)
				}
				if u := faketest.UndeclaredVariants(s, c.Records); len(u) > 0 {
					t.Errorf("variants the suite runs but does not declare: %v", u)
				}
			}
			want := append(faketest.Registered(Family, info, kernels.Baseline, kernels.Variant), "pq_rotq_group", "pq_rotq_token")
			if miss := faketest.Missing(want, dev.Kernels()); len(miss) > 0 {
				t.Errorf("kernels no suite timed: %v", miss)
			}
			if len(c.Records) == 0 {
				t.Fatal("no records")
			}
			for _, r := range c.Records {
				if r.Shape != "K256xP2" && (r.Suite != "tokstream" || r.Shape != shapeName(LawShapes[0].K, LawShapes[0].P)) {
					t.Errorf("%s record of shape %s: only the norm-fed linear (and tokstream's law shapes) is benched", r.Suite, r.Shape)
				}
				if r.Check == nil || r.Check.Status != results.CheckFail || len(r.SamplesUS) != 0 || r.Verdict != "" {
					t.Errorf("%s: on a device that computes nothing: check %+v, %d samples, verdict %q", r.Key(), r.Check, len(r.SamplesUS), r.Verdict)
				}
			}
		})
	}
}

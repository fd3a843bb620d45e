package normrot

import (
	"slices"
	"testing"

	"github.com/parharness/parharness/families/internal/faketest"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/kernels"
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
			if !slices.Contains(dev.Kernels(), TokenKernel(32)) {
				t.Errorf("the 32-warp per-token kernel did not run")
			}
		})
	}
}

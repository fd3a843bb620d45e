package ewrot

import (
	"testing"

	"github.com/parharness/parharness/families/internal/faketest"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/shapes"
)

// The ewrot gate on a fake device (internal/faketest): every launch's
// arguments match the compiled kernel's parameters on both targets (the
// ewrot kernels and the producers' peers of the unfused chain), every
// registered ewrot kernel runs, and a device that computes nothing fails.

var fakeTargets = faketest.Targets(1 << 20)

func TestGateRunsEveryRegisteredKernel(t *testing.T) {
	for _, info := range fakeTargets {
		env, dev := faketest.Env(t, info)
		res := gates.RunGate(env, gates.Gate{Name: "ewrot-launches", Device: true, Run: func(t *gates.T) {
			for i, c := range []Case{
				newCase(SiluMul, shapes.KP{K: 384, P: 2}, 5, "edge"),
				newCase(GatedNorm, shapes.KP{K: 512, P: 2}, 200, "normal"),
				newCase(SigmoidGate, shapes.KP{K: 640, P: 1}, 17, "subnormal"),
			} {
				pc, err := Prepare(uint64(i), c, c.M <= GroupMaxM)
				t.Check(err, "inputs")
				RunCase(t, pc, uint64(i))
				t.Release()
			}
		}})
		if bad := faketest.ArgumentErrors(res); len(bad) > 0 {
			t.Errorf("%s: %v", info.Arch, bad)
		}
		if res.Status != gates.Fail {
			t.Errorf("%s: a device that runs nothing got %s from the ewrot checks", info.Arch, res.Status)
		}
		want := append(faketest.Registered(Family, info, kernels.Baseline, kernels.Variant), "pq_rotq_group", "pq_rotq_token")
		if miss := faketest.Missing(want, dev.Kernels()); len(miss) > 0 {
			t.Errorf("%s: kernels the gate never ran: %v (ran %v)", info.Arch, miss, dev.Kernels())
		}
	}
}

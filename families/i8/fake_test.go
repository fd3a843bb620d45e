package i8

import (
	"strings"
	"testing"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/families/gemm"
	"github.com/parharness/parharness/families/internal/faketest"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/results"
	"github.com/parharness/parharness/shapes"
)

// The i8 gate and bench on a fake device (internal/faketest): every
// launch's arguments match the compiled kernel's declared parameters on
// both targets, every registered I8 kernel is run by the gate and timed by
// the bench, and a device that computes nothing fails every check.

var fakeTargets = faketest.Targets(1 << 20)

// tinyShapes has the four decode linears the suite looks up, small.
func tinyShapes(t *testing.T) *shapes.Set {
	src := "model tiny\ntp 1\n" +
		"linear attn_qkv K=256 N=(128+64+64) kind=w4a8\n" +
		"linear attn_o K=256 N=128 kind=w4a8\n" +
		"linear mlp_gate_up K=256 N=(128+128) kind=w4a8\n" +
		"linear mlp_down K=640 N=128 kind=w4a8\n" +
		"linear gdn_in_qkvz K=256 N=(128+128) kind=w4a8\n"
	s, err := shapes.Parse("tiny", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestGateRunsEveryRegisteredKernel(t *testing.T) {
	for _, info := range fakeTargets {
		t.Run(info.Arch, func(t *testing.T) {
			env, dev := faketest.Env(t, info)
			res := gates.RunGate(env, gates.Gate{Name: "i8-launches", Device: true, Run: func(t *gates.T) {
				runProducerCases(t, []prodCase{{K: 384, P: 2, M: 5, dist: "normal"}, {K: 256, P: 1, M: 200, dist: "ties"}}, 1)
				runGemmCases(t, []gemmCase{{label: "syn", shape: synthShape.shape, M: 5, dist: "normal"}, {label: "syn", shape: synthShape.shape, M: 13, dist: "smallcodes"}, {label: "syn", shape: synthShape.shape, M: 17, dist: "outlier"},
					{label: "syn", shape: synthShape.shape, M: 40, dist: "large"}, {label: "syn", shape: synthShape.shape, M: 64, dist: "subnormal"}}, 1)
				runPreCases(t, []gemmCase{{label: "syn", shape: preSynth.shape, M: 130, dist: "normal"}}, 1)
			}})
			if bad := faketest.ArgumentErrors(res); len(bad) > 0 {
				t.Errorf("argument errors: %v", bad)
			}
			if res.Status != gates.Fail {
				t.Errorf("a device that runs nothing got %s from the i8 checks", res.Status)
			}
			want := append(faketest.Registered(Family, info, kernels.Baseline, kernels.Variant), "pq_rot_bf16")
			if miss := faketest.Missing(want, dev.Kernels()); len(miss) > 0 {
				t.Errorf("registered kernels the gate never ran: %v (ran %v)", miss, dev.Kernels())
			}
		})
	}
}

// Every registered I8 kernel of the decode band (the per-group producer,
// the GEMMs) and its e4m3 peer is timed by the suite, and on a device that
// computes nothing every record is FAIL and untimed.
func TestBenchTimesEveryRegisteredKernel(t *testing.T) {
	for _, info := range fakeTargets {
		t.Run(info.Arch, func(t *testing.T) {
			c, dev := faketest.Ctx(t, info, tinyShapes(t), []int{1, 8, 16, 17, 64})
			for _, s := range bench.FamilySuites(Family) {
				if err := s.Run(c); err != nil {
					t.Fatalf("suite %s: %v", s.Name, err)
				}
				if u := faketest.UndeclaredVariants(s, c.Records); len(u) > 0 {
					t.Errorf("undeclared variants: %v", u)
				}
			}
			var want []string
			for _, k := range kernels.Select(kernels.Query{Family: Family, Arch: info.CodeArch(), Full: true}) {
				if k.Op == OpDec || k.Op == OpGroup {
					want = append(want, k.Name)
				}
			}
			want = append(want, "pq_rotq_group", gemm.DecKernel(1), gemm.DecKernel(64))
			if miss := faketest.Missing(want, dev.Kernels()); len(miss) > 0 {
				t.Errorf("kernels the suite never timed: %v (ran %v)", miss, dev.Kernels())
			}
			if len(c.Records) == 0 {
				t.Fatal("no records")
			}
			for _, r := range c.Records {
				if r.Check == nil || r.Check.Status != results.CheckFail || len(r.SamplesUS) != 0 || r.Verdict != "" {
					t.Errorf("%s: on a device that computes nothing: check %+v, %d samples, verdict %q", r.Key(), r.Check, len(r.SamplesUS), r.Verdict)
				}
			}
		})
	}
}

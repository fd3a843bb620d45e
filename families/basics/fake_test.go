package basics

import (
	"testing"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/families/internal/faketest"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/results"
	"github.com/parharness/parharness/shapes"
)

// notByGateOrBench are the basics kernels neither a gate nor a suite runs,
// with where they are exercised instead.
var notByGateOrBench = map[string]string{
	"selftest_spin": "parharness selftest hang (cmd/parharness TestWatchdogExits)",
	"read_v4x4":     "the decode suite's read roof, output checked every run (families/gemm TestDecReadVariantCheck)",
}

// The harness self-test gate, the copy and launch suites on a fake device:
// the self-test fails on a device that computes nothing, the copy check
// fails every copy variant there, and every basics kernel is run.
func TestBasicsRunEveryKernel(t *testing.T) {
	for _, info := range faketest.Targets(1 << 20) {
		env, dev := faketest.Env(t, info)
		for _, g := range gates.All() {
			if g.Family == Family {
				if res := gates.RunGate(env, g); res.Status != gates.Fail || len(faketest.ArgumentErrors(res)) > 0 {
					t.Errorf("%s %s on a no-op device: %s (%s)", info.Arch, g.Name, res.Status, res.Reason)
				}
			}
		}
		c, cdev := faketest.Ctx(t, info, shapes.MustBuiltin("qwen38-27b-tp2"), nil)
		p, err := CopyPoint(c, 4<<20, 5)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Measure(p); err != nil {
			t.Fatal(err)
		}
		for _, kind := range []string{ScrubRead, ScrubCopy} {
			if _, err := ScrubCheck(c, kind, 4); err != nil {
				t.Fatalf("%s scrub check: %v", kind, err)
			}
		}
		if s, ok := bench.LookupSuite("launch"); !ok || s.Run(c) != nil {
			t.Fatalf("launch suite: %v", ok)
		}
		for _, r := range c.Records {
			want := results.CheckFail
			if r.Suite == "launch" {
				want = results.CheckNone
			}
			if r.Check == nil || r.Check.Status != want {
				t.Errorf("%s %s: check %+v, want %s", info.Arch, r.Key(), r.Check, want)
			}
		}
		for _, s := range bench.FamilySuites(Family) {
			if u := faketest.UndeclaredVariants(s, c.Records); len(u) > 0 {
				t.Errorf("%s: variants the suite runs but does not declare (--variants would refuse them): %v", info.Arch, u)
			}
		}
		got := append(dev.Kernels(), cdev.Kernels()...)
		var want []string
		for _, k := range faketest.Registered(Family, info) {
			if _, ok := notByGateOrBench[k]; !ok {
				want = append(want, k)
			}
		}
		if miss := faketest.Missing(want, got); len(miss) > 0 {
			t.Errorf("%s: basics kernels nothing ran: %v", info.Arch, miss)
		}
	}
}

package gates

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestRunGateOutcomes(t *testing.T) {
	env := &Env{Seed: 7}
	cases := []struct {
		g      Gate
		status Status
		reason string
	}{
		{Gate{Name: "pass", Run: func(t *T) { t.Metric("x", 1) }}, Pass, ""},
		{Gate{Name: "fail", Run: func(t *T) { t.Failf("bad %d", 1); t.Failf("bad %d", 2) }}, Fail, "bad 1"},
		{Gate{Name: "skip", Run: func(t *T) { t.Skipf("no thing") }}, Skip, "no thing"},
		{Gate{Name: "fail-then-skip", Run: func(t *T) { t.Failf("first"); t.Skipf("later") }}, Fail, "first"},
		{Gate{Name: "panic", Run: func(t *T) { panic(errors.New("deliberate")) }}, Fail, "panic: deliberate"},
		{Gate{Name: "device", Device: true, Run: func(t *T) { t.Failf("must not run") }}, Skip, "no GPU device"},
	}
	for _, c := range cases {
		r := RunGate(env, c.g)
		if r.Status != c.status || !strings.Contains(r.Reason, c.reason) {
			t.Errorf("%s: %s %q, want %s containing %q", c.g.Name, r.Status, r.Reason, c.status, c.reason)
		}
		if r.Seed != SeedFor(7, c.g.Name) {
			t.Errorf("%s: seed %d not derived from the run seed", c.g.Name, r.Seed)
		}
	}
	if SeedFor(7, "a") == SeedFor(7, "b") || SeedFor(7, "a") == SeedFor(8, "a") {
		t.Errorf("SeedFor does not separate gates or runs")
	}
}

func TestFailuresAreBounded(t *testing.T) {
	r := RunGate(&Env{}, Gate{Name: "many", Run: func(t *T) {
		for i := 0; i < 100; i++ {
			t.Failf("failure %d", i)
		}
	}})
	if len(r.Failures) != maxFailures+1 || !strings.Contains(r.Failures[maxFailures], "not listed") {
		t.Errorf("%d failure lines kept; want %d and a note", len(r.Failures), maxFailures+1)
	}
}

func TestRegistryHasProofs(t *testing.T) {
	for _, g := range All() {
		if g.Proves == "" || g.Suites == 0 {
			t.Errorf("gate %s lacks Proves or Suites", g.Name)
		}
	}
}

// A NaN metric (an unwritten, poisoned output) must not make the results
// document unwritable: it is logged, the failure stands, the JSON is valid.
func TestNonFiniteMetricKeepsResultsWritable(t *testing.T) {
	r := RunGate(&Env{Seed: 1}, Gate{Name: "nan", Run: func(t *T) {
		t.Metric("rel", math.NaN())
		t.Metric("worst", math.Inf(1))
		t.Metric("ok", 1)
		t.Failf("output unwritten")
	}})
	if r.Status != Fail {
		t.Fatalf("status %s, want FAIL", r.Status)
	}
	if _, ok := r.Metrics["rel"]; ok || len(r.Metrics) != 1 {
		t.Errorf("metrics %v: non-finite values kept", r.Metrics)
	}
}

// A gate that could not run is ERROR, not FAIL; a failure before it stays
// FAIL (a wrong result outranks a missing piece).
func TestUnavailableIsError(t *testing.T) {
	r := RunGate(&Env{}, Gate{Name: "u", Run: func(t *T) { t.Unavailablef("code object x is missing") }})
	if r.Status != Error || r.Reason != "code object x is missing" {
		t.Errorf("unavailable: %s %q", r.Status, r.Reason)
	}
	r = RunGate(&Env{}, Gate{Name: "f", Run: func(t *T) { t.Failf("wrong"); t.Unavailablef("missing") }})
	if r.Status != Fail {
		t.Errorf("fail then unavailable: %s", r.Status)
	}
}

// FailFast stops a gate at its first failure.
func TestFailFastStopsAtFirstFailure(t *testing.T) {
	after := false
	r := RunGate(&Env{FailFast: true}, Gate{Name: "ff", Run: func(t *T) { t.Failf("first"); after = true; t.Failf("second") }})
	if r.Status != Fail || after || len(r.Failures) != 1 || r.Reason != "first" {
		t.Errorf("fail-fast: status %s, ran on %v, failures %v", r.Status, after, r.Failures)
	}
}

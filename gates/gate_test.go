package gates

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/parharness/parharness/internal/progress"
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

// A gate's progress meter prints where the run's Env.Progress says, under
// the gate's name, and ends with the gate (its last line is printed even
// when the gate stops early); without Env.Progress a gate's meter is nil
// and reports nothing.
func TestGateProgressEndsWithTheGate(t *testing.T) {
	now := time.Unix(0, 0)
	var out bytes.Buffer
	env := &Env{Progress: func(label, unit string, total int) *progress.Meter {
		return progress.New(&out, label, unit, total, progress.Options{Now: func() time.Time { return now }})
	}}
	r := RunGate(env, Gate{Name: "sweep", Run: func(t *T) {
		m := t.Progress("cases", 4)
		for i := 0; i < 3; i++ {
			now = now.Add(11 * time.Second)
			m.Step(1, 0)
		}
		t.Fatalf("stopped after 3 of 4 cases")
	}})
	if r.Status != Fail {
		t.Fatalf("status %s", r.Status)
	}
	want := "sweep: 1/4 cases, 11 s, ~33 s left\nsweep: 2/4 cases, 22 s, ~22 s left\nsweep: 3/4 cases, 33 s, ~11 s left\nsweep: 3/4 cases, 33 s\n"
	if out.String() != want {
		t.Errorf("progress:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	RunGate(&Env{}, Gate{Name: "quiet", Run: func(t *T) {
		if m := t.Progress("cases", 1); m != nil {
			t.Failf("a meter without Env.Progress")
		}
	}})
}

package bench

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/results"
)

// fakeDevice simulates one stream in order: a replayed graph advances a
// clock by the per-call cost of the calls captured into it (plus a small
// deterministic jitter), and an event records the clock. Enough to test the
// engine's protocol without a GPU.
type fakeDevice struct {
	gpu.Device
	clock      float64 // µs
	capturing  *fakeGraph
	events     map[gpu.Event]float64
	nextEvent  gpu.Event
	replays    []string // graph names in replay order
	jitter     int
	captures   int      // captures begun
	eagerFirst []string // variants run eagerly before the first capture
}

type fakeGraph struct {
	d     *fakeDevice
	name  string
	costs []float64
}

func (g *fakeGraph) Launch(gpu.Stream) error {
	g.d.jitter++
	j := float64(g.d.jitter%7-3) * 0.0005 // ±0.15% of a 1 µs call, deterministic
	for _, c := range g.costs {
		g.d.clock += c * (1 + j)
	}
	g.d.replays = append(g.d.replays, g.name)
	return nil
}
func (g *fakeGraph) Destroy() error { return nil }

func (d *fakeDevice) Info() gpu.Info                     { return gpu.Info{LLCBytes: 60 << 20, SMs: 132} }
func (d *fakeDevice) NewStream() (gpu.Stream, error)     { return 1, nil }
func (d *fakeDevice) DestroyStream(gpu.Stream) error     { return nil }
func (d *fakeDevice) StreamSynchronize(gpu.Stream) error { return nil }
func (d *fakeDevice) Synchronize() error                 { return nil }
func (d *fakeDevice) BeginCapture(gpu.Stream) error {
	d.captures++
	d.capturing = &fakeGraph{d: d}
	return nil
}
func (d *fakeDevice) EndCapture(gpu.Stream) (gpu.Graph, error) {
	g := d.capturing
	d.capturing = nil
	return g, nil
}
func (d *fakeDevice) NewEvent() (gpu.Event, error) {
	d.nextEvent++
	return d.nextEvent, nil
}
func (d *fakeDevice) DestroyEvent(gpu.Event) error { return nil }
func (d *fakeDevice) Record(e gpu.Event, _ gpu.Stream) error {
	if d.events == nil {
		d.events = map[gpu.Event]float64{}
	}
	d.events[e] = d.clock
	return nil
}
func (d *fakeDevice) Elapsed(a, b gpu.Event) (float32, error) {
	return float32((d.events[b] - d.events[a]) / 1000), nil
}

// call returns an Enqueue that captures one call of the given cost (or,
// outside a capture, records an eager call).
func call(d *fakeDevice, name string, us float64) func(gpu.Stream, int) error {
	return func(gpu.Stream, int) error {
		if d.capturing == nil {
			if d.captures == 0 {
				d.eagerFirst = append(d.eagerFirst, name)
			}
			return nil
		}
		d.capturing.name = name
		d.capturing.costs = append(d.capturing.costs, us)
		return nil
	}
}

// checkLog is a variant's output check that records the copies it was
// asked to prepare and verify and fails the verifies listed in bad (by
// call number, from 0).
type checkLog struct {
	prepared, verified []int
	bad                map[int]bool
}

func (c *checkLog) check() *Check {
	return &Check{
		Prepare: func(k int) error { c.prepared = append(c.prepared, k); return nil },
		Verify: func(k int) error {
			n := len(c.verified)
			c.verified = append(c.verified, k)
			if c.bad[n] {
				return fmt.Errorf("element 7 is 0xff, want 0x12")
			}
			return nil
		},
	}
}

func TestEngineProtocol(t *testing.T) {
	d := &fakeDevice{}
	e := &Engine{Dev: d, Stream: 1, Cfg: Config{MinCalls: 8, MinGraphUS: 50, Warmup: time.Millisecond, Reps: 6}}
	var ca, cs, cb checkLog
	p := Point{Suite: "s", Kernel: "k", Shape: "x", M: 1, Regime: Hot, Copies: 1, Bytes: 1000,
		Variants: []Variant{
			{Name: "A", Enqueue: call(d, "A", 1.0), Check: ca.check()},
			{Name: "A-again", Enqueue: call(d, "A-again", 1.0), Check: cs.check()},
			{Name: "B", Enqueue: call(d, "B", 1.05), Check: cb.check()},
		}}
	recs, err := e.Measure(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	a, same, b := recs[0], recs[1], recs[2]
	if a.Control == nil || a.Control.SpreadPct > 1 {
		t.Errorf("baseline control missing or noisy: %+v", a.Control)
	}
	if same.Verdict != "~" {
		t.Errorf("identical code called %q", same.Verdict)
	}
	if b.Verdict != "slower" {
		t.Errorf("5%% slower variant called %q", b.Verdict)
	}
	if got := a.TrimmedMeanUS; got < 0.99 || got > 1.01 {
		t.Errorf("per-call time %.4f µs, want 1 (replay time / calls per graph)", got)
	}
	if n := recs[0].Extra["calls_per_graph"]; n < 50 {
		t.Errorf("%.0f calls per graph: the graph should have grown to MinGraphUS", n)
	}
	if fmt.Sprint(d.eagerFirst) != "[A A-again B]" {
		t.Errorf("variants run eagerly before the first capture: %v, want every variant once", d.eagerFirst)
	}
	for _, r := range recs {
		if r.Check == nil || r.Check.Status != results.CheckPass {
			t.Errorf("%s: check %+v, want PASS", r.Variant, r.Check)
		}
	}
	for _, c := range []*checkLog{&ca, &cs, &cb} {
		if fmt.Sprint(c.prepared) != "[0 0]" || fmt.Sprint(c.verified) != "[0 0]" {
			t.Errorf("check calls: prepared %v verified %v, want copy 0 before and after the timed replays", c.prepared, c.verified)
		}
	}
	// Timed replays are interleaved A, A-again, B, control, A, ...; the
	// three check replays follow them.
	timed := d.replays[len(d.replays)-4*e.Cfg.Reps-3 : len(d.replays)-3]
	want := []string{"A", "A-again", "B", "A"}
	for i, name := range timed {
		if name != want[i%4] {
			t.Fatalf("replay %d is %s, want %s (order %s)", i, name, want[i%4], strings.Join(timed, ","))
		}
	}
}

// A variant whose output fails its check, before or after the timed
// replays, is recorded FAIL with the check's message and without samples
// or verdict; the others are timed and judged as usual. A failing
// baseline leaves the rung untimed. Every checked copy is the first and
// the last of the rotation.
func TestEngineChecksOutputs(t *testing.T) {
	d := &fakeDevice{}
	e := &Engine{Dev: d, Stream: 1, Cfg: Config{MinCalls: 4, Warmup: time.Millisecond, Reps: 4}}
	var base, before, after checkLog
	before.bad = map[int]bool{1: true}
	after.bad = map[int]bool{4: true}
	p := Point{Suite: "s", Kernel: "k", Shape: "x", M: 1, Regime: Hot, Copies: 3, Bytes: 1000,
		Variants: []Variant{
			{Name: "A", Enqueue: call(d, "A", 1.0), Check: base.check()},
			{Name: "wrong", Enqueue: call(d, "wrong", 0.5), Check: before.check()},
			{Name: "wrong-later", Enqueue: call(d, "wrong-later", 0.5), Check: after.check()},
			{Name: "attribution", Enqueue: call(d, "attribution", 0.5), Unchecked: "computes nothing"},
		}}
	recs, err := e.Measure(p)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(base.verified) != "[0 1 2 0 1 2]" {
		t.Errorf("baseline verified copies %v, want the first, middle and last (0, 1, 2), before and after", base.verified)
	}
	for _, r := range recs[1:3] {
		if !r.Failed() || len(r.SamplesUS) != 0 || r.Verdict != "" || !strings.Contains(r.Check.Reason, "element 7") {
			t.Errorf("%s: %+v, %d samples, verdict %q: want FAIL with the message, untimed", r.Variant, r.Check, len(r.SamplesUS), r.Verdict)
		}
	}
	if !strings.Contains(recs[1].Check.Reason, "before the timed replays") || !strings.Contains(recs[2].Check.Reason, "after the timed replays") {
		t.Errorf("the failures do not say when: %q, %q", recs[1].Check.Reason, recs[2].Check.Reason)
	}
	if n := countOf(d.replays, "wrong"); n != 1 {
		t.Errorf("the variant that failed before timing was replayed %d times, want once (its check)", n)
	}
	if r := recs[3]; r.Check == nil || r.Check.Status != results.CheckNone || r.Check.Reason != "computes nothing" || len(r.SamplesUS) == 0 {
		t.Errorf("unchecked variant: %+v", r.Check)
	}
	if r := recs[0]; r.Check.Status != results.CheckPass || r.Control == nil {
		t.Errorf("baseline: %+v", r.Check)
	}
	doc := results.Document{Schema: results.SchemaVersion, Records: recs}
	if err := doc.Validate(); err != nil {
		t.Errorf("the records do not validate: %v", err)
	}

	// A failing baseline: nothing is timed.
	d2 := &fakeDevice{}
	e2 := &Engine{Dev: d2, Stream: 1, Cfg: e.Cfg}
	var bad, other checkLog
	bad.bad = map[int]bool{0: true}
	recs, err = e2.Measure(Point{Suite: "s", Kernel: "k", Shape: "x", M: 1, Regime: Hot, Copies: 1, Bytes: 1000,
		Variants: []Variant{{Name: "A", Enqueue: call(d2, "A", 1), Check: bad.check()}, {Name: "B", Enqueue: call(d2, "B", 1), Check: other.check()}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if !r.Failed() || len(r.SamplesUS) != 0 {
			t.Errorf("%s with a failing baseline: %+v, %d samples", r.Variant, r.Check, len(r.SamplesUS))
		}
	}
	if !strings.Contains(recs[1].Check.Reason, "baseline A failed") {
		t.Errorf("B's reason: %q", recs[1].Check.Reason)
	}

	// A baseline that fails only after the timed replays: FAIL, and the
	// others keep their own checks but get no verdict against it.
	d3 := &fakeDevice{}
	e3 := &Engine{Dev: d3, Stream: 1, Cfg: e.Cfg}
	var late, fine checkLog
	late.bad = map[int]bool{1: true}
	recs, err = e3.Measure(Point{Suite: "s", Kernel: "k", Shape: "x", M: 1, Regime: Hot, Copies: 1, Bytes: 1000,
		Variants: []Variant{{Name: "A", Enqueue: call(d3, "A", 1), Check: late.check()}, {Name: "B", Enqueue: call(d3, "B", 1), Check: fine.check()}}})
	if err != nil {
		t.Fatal(err)
	}
	if !recs[0].Failed() || recs[1].Failed() || recs[1].Verdict != "" || recs[1].Control != nil {
		t.Errorf("late baseline failure: %+v / %+v verdict %q", recs[0].Check, recs[1].Check, recs[1].Verdict)
	}
	if err := (&results.Document{Schema: results.SchemaVersion, Records: recs}).Validate(); err != nil {
		t.Errorf("the records do not validate: %v", err)
	}

	// A variant with neither a check nor a reason is refused.
	if _, err := e2.Measure(Point{Suite: "s", Kernel: "k", Shape: "x", M: 1, Regime: Hot, Copies: 1,
		Variants: []Variant{{Name: "A", Enqueue: call(d2, "A", 1)}}}); err == nil || !strings.Contains(err.Error(), "no output check") {
		t.Errorf("an unchecked variant without a reason was measured: %v", err)
	}
}

func countOf(xs []string, x string) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}

func TestEngineRefusesLeakyCold(t *testing.T) {
	d := &fakeDevice{}
	e := &Engine{Dev: d, Stream: 1, Cfg: Config{MinCalls: 4, Reps: 4}}
	_, err := e.Measure(Point{Kernel: "k", Shape: "x", Regime: Cold, Footprint: 1 << 20, Copies: 2,
		Variants: []Variant{{Name: "A", Enqueue: call(d, "A", 1), Unchecked: "test"}}})
	if err == nil || !strings.Contains(err.Error(), "cold regime leaked") {
		t.Fatalf("leaky cold point measured: %v", err)
	}
}

// TestEngineLaunchOnce: under LaunchOnce each variant is launched exactly
// once, eagerly, between its poisoning and its verify, in the point's
// order, and nothing is captured or timed.
func TestEngineLaunchOnce(t *testing.T) {
	d := &fakeDevice{}
	e := &Engine{Dev: d, Stream: 1, Cfg: Config{MinCalls: 4, Warmup: time.Millisecond, Reps: 4}, LaunchOnce: true}
	var order []string
	variant := func(name string, fail bool) Variant {
		v := Variant{Name: name, Enqueue: func(gpu.Stream, int) error { order = append(order, "launch "+name); return nil }}
		if name == "unchecked" {
			v.Unchecked = "computes nothing"
			return v
		}
		v.Check = &Check{
			Prepare: func(k int) error { order = append(order, fmt.Sprintf("prepare %s %d", name, k)); return nil },
			Verify: func(k int) error {
				order = append(order, fmt.Sprintf("verify %s %d", name, k))
				if fail {
					return fmt.Errorf("element 3 is NaN")
				}
				return nil
			},
		}
		return v
	}
	recs, err := e.Measure(Point{Suite: "s", Kernel: "k", Shape: "x", M: 5, Regime: Cold, Copies: 3, Bytes: 1000, Footprint: 100 << 20,
		Variants: []Variant{variant("A", false), variant("B", true), variant("unchecked", false)}})
	if err != nil {
		t.Fatal(err)
	}
	want := "[prepare A 0 launch A verify A 0 prepare B 0 launch B verify B 0 launch unchecked]"
	if got := fmt.Sprint(order); got != want {
		t.Errorf("order %s, want %s", got, want)
	}
	if d.captures != 0 || len(d.replays) != 0 {
		t.Errorf("%d captures and %d replays under LaunchOnce, want none", d.captures, len(d.replays))
	}
	wantStatus := []string{results.CheckPass, results.CheckFail, results.CheckNone}
	for i, r := range recs {
		if r.Check == nil || r.Check.Status != wantStatus[i] || len(r.SamplesUS) != 0 || !r.HasFlag(results.FlagLaunchOnce) || r.M != 5 {
			t.Errorf("record %d (%s): check %+v, %d samples, flags %v", i, r.Variant, r.Check, len(r.SamplesUS), r.Flags)
		}
	}
	if !strings.Contains(recs[1].Check.Reason, "element 3") {
		t.Errorf("B's reason %q does not carry the check's message", recs[1].Check.Reason)
	}

	t.Run("a check's own launch", func(t *testing.T) {
		order = nil
		ref := variant("R", false)
		ref.Check.Launches = "the reference kernel"
		ref.Roof, ref.Bytes = true, 10 // a roof's own bytes are its rows'
		recs, err := e.Measure(Point{Suite: "s", Kernel: "k", Shape: "x", M: 5, Regime: Cold, Copies: 3, Bytes: 1000, Footprint: 100 << 20,
			Extra: map[string]float64{"split": 2}, Variants: []Variant{variant("A", false), ref}})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range recs {
			names = append(names, r.Variant)
		}
		if got := strings.Join(names, ","); got != "A,R check: the reference kernel,R" {
			t.Errorf("rows %s: want the check's launch listed before its variant", got)
		}
		if r := recs[2]; r.Bytes != 10 || !r.HasFlag(results.FlagRoof) || r.Extra["split"] != 2 {
			t.Errorf("roof row: %d bytes, flags %v, extra %v", r.Bytes, r.Flags, r.Extra)
		}
		recs[0].Extra["split"] = 3
		if recs[2].Extra["split"] != 2 {
			t.Error("rows share the point's Extra map")
		}
	})
	t.Run("a failed launch keeps the rows before it", func(t *testing.T) {
		broken := Variant{Name: "broken", Unchecked: "x", Enqueue: func(gpu.Stream, int) error { return fmt.Errorf("invalid argument") }}
		recs, err := e.Measure(Point{Suite: "s", Kernel: "k", Shape: "x", M: 5, Regime: Cold, Copies: 3, Bytes: 1000, Footprint: 100 << 20,
			Variants: []Variant{variant("A", false), broken, variant("C", false)}})
		if err == nil || !strings.Contains(err.Error(), "variant broken: the launch: invalid argument") {
			t.Errorf("err %v: want the launch's error, naming the variant", err)
		}
		if len(recs) != 1 || recs[0].Variant != "A" {
			t.Errorf("%d rows returned with the error, want A's alone", len(recs))
		}
	})
}

// Every check's launches, and only they, run on freshly poisoned shared
// memory: the hook runs once per check (before and after the timed
// replays, and once a variant under LaunchOnce), after the check's
// Prepare and before the replay it checks; an error from it fails the
// checked variants' records, naming it, and nothing is timed.
func TestEngineChecksOnPoisonedShared(t *testing.T) {
	d := &fakeDevice{}
	var log []string
	var ca, cb checkLog
	e := &Engine{Dev: d, Stream: 1, Cfg: Config{MinCalls: 4, Warmup: time.Millisecond, Reps: 4},
		PoisonShared: func() error {
			log = append(log, fmt.Sprintf("poison after %d prepares, %d replays", len(ca.prepared)+len(cb.prepared), len(d.replays)))
			return nil
		}}
	p := Point{Suite: "s", Kernel: "k", Shape: "x", M: 1, Regime: Hot, Copies: 1, Bytes: 1000,
		Variants: []Variant{
			{Name: "A", Enqueue: call(d, "A", 1.0), Check: ca.check()},
			{Name: "B", Enqueue: call(d, "B", 0.5), Check: cb.check()},
			{Name: "C", Enqueue: call(d, "C", 0.5), Unchecked: "computes nothing"},
		}}
	if _, err := e.Measure(p); err != nil {
		t.Fatal(err)
	}
	checks := len(ca.verified) + len(cb.verified)
	if len(log) != checks || checks != 4 {
		t.Fatalf("%d shared-memory poisons for %d checks (want one a check, 4): %v", len(log), checks, log)
	}
	for i, l := range log {
		// The i-th check's poison follows its own Prepare (i+1 so far) and
		// comes before its replay.
		if !strings.HasPrefix(l, fmt.Sprintf("poison after %d prepares", i+1)) {
			t.Errorf("poison %d: %s", i, l)
		}
	}

	log, ca, cb = nil, checkLog{}, checkLog{}
	e.LaunchOnce = true
	if _, err := e.Measure(p); err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 {
		t.Errorf("launch-once: %d poisons for 2 checked variants: %v", len(log), log)
	}

	e.LaunchOnce = false
	e.PoisonShared = func() error { return fmt.Errorf("no device left") }
	recs, err := e.Measure(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs[:2] {
		if !r.Failed() || len(r.SamplesUS) != 0 || !strings.Contains(r.Check.Reason, "no device left") {
			t.Errorf("%s under a failing poison: %+v, %d samples: want FAIL naming it, untimed", r.Variant, r.Check, len(r.SamplesUS))
		}
	}
}

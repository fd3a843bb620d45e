package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/parharness/parharness/gpu"
)

// fakeDevice simulates one stream in order: a replayed graph advances a
// clock by the per-call cost of the calls captured into it (plus a small
// deterministic jitter), and an event records the clock. Enough to test the
// engine's protocol without a GPU.
type fakeDevice struct {
	gpu.Device
	clock     float64 // µs
	capturing *fakeGraph
	events    map[gpu.Event]float64
	nextEvent gpu.Event
	replays   []string // graph names in replay order
	jitter    int
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
func (d *fakeDevice) BeginCapture(gpu.Stream) error {
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

// call returns an Enqueue that captures one call of the given cost.
func call(d *fakeDevice, name string, us float64) func(gpu.Stream, int) error {
	return func(gpu.Stream, int) error {
		d.capturing.name = name
		d.capturing.costs = append(d.capturing.costs, us)
		return nil
	}
}

func TestEngineProtocol(t *testing.T) {
	d := &fakeDevice{}
	e := &Engine{Dev: d, Stream: 1, Cfg: Config{MinCalls: 8, MinGraphUS: 50, Warmup: time.Millisecond, Reps: 6}}
	p := Point{Suite: "s", Kernel: "k", Shape: "x", M: 1, Regime: Hot, Copies: 1, Bytes: 1000,
		Variants: []Variant{
			{Name: "A", Enqueue: call(d, "A", 1.0)},
			{Name: "A-again", Enqueue: call(d, "A-again", 1.0)},
			{Name: "B", Enqueue: call(d, "B", 1.05)},
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
	// Timed replays are interleaved A, A-again, B, control, A, ...
	timed := d.replays[len(d.replays)-4*e.Cfg.Reps:]
	want := []string{"A", "A-again", "B", "A"}
	for i, name := range timed {
		if name != want[i%4] {
			t.Fatalf("replay %d is %s, want %s (order %s)", i, name, want[i%4], strings.Join(timed, ","))
		}
	}
}

func TestEngineRefusesLeakyCold(t *testing.T) {
	d := &fakeDevice{}
	e := &Engine{Dev: d, Stream: 1, Cfg: Config{MinCalls: 4, Reps: 4}}
	_, err := e.Measure(Point{Kernel: "k", Shape: "x", Regime: Cold, Footprint: 1 << 20, Copies: 2,
		Variants: []Variant{{Name: "A", Enqueue: call(d, "A", 1)}}})
	if err == nil || !strings.Contains(err.Error(), "cold regime leaked") {
		t.Fatalf("leaky cold point measured: %v", err)
	}
}

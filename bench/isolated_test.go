package bench

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/results"
)

// The isolated regime: every timed launch follows a scrub (outside its
// events), each variant that passed its check gets a second record with
// the events' samples, regime isolated and timing events, and the
// baseline's isolated record carries its own control.
func TestIsolatedRegime(t *testing.T) {
	d := &fakeDevice{}
	scrubs, coldCalls := 0, 0
	cold := false
	iso := func(name string, us float64) func(gpu.Stream, int) error {
		captured := call(d, name, us)
		return func(s gpu.Stream, k int) error {
			if d.capturing != nil || d.captures == 0 {
				return captured(s, k)
			}
			cost := us
			if cold { // a call right after a scrub reads from memory: 20% slower here
				cost *= 1.2
				coldCalls++
			}
			cold = false
			d.clock += cost
			return nil
		}
	}
	e := &Engine{Dev: d, Stream: 1, Cfg: Config{MinCalls: 8, MinGraphUS: 50, Warmup: time.Millisecond, Reps: 6},
		Isolated: true, IsolatedReps: 9, IsolatedFlags: []string{results.FlagScrubLeaked},
		Scrub: func(gpu.Stream) error { scrubs++; cold = true; d.clock += 100; return nil },
		Clocks: func() (results.ClockSample, []string, error) {
			return results.ClockSample{SMMHz: 1980, MemMHz: 3201}, []string{"sw_power_cap"}, nil
		},
		Flags: []string{results.FlagUnderProfiler}}
	var ca, cb checkLog
	p := Point{Suite: "s", Kernel: "k", Shape: "x", M: 1, Regime: Cold, Copies: 4, Footprint: 50 << 20, Bytes: 1000,
		Variants: []Variant{
			{Name: "A", Enqueue: iso("A", 1.0), Check: ca.check()},
			{Name: "B", Enqueue: iso("B", 2.0), Check: cb.check()},
		}}
	recs, err := e.Measure(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 {
		t.Fatalf("%d records, want 2 stream + 2 isolated", len(recs))
	}
	if scrubs != 9*3 || coldCalls != 9*3 {
		t.Errorf("%d scrubs, %d cold calls; want one per isolated launch (9 reps x 3 arms)", scrubs, coldCalls)
	}
	keys := map[string]bool{}
	for i, r := range recs {
		keys[r.Key()] = true
		wantRegime, wantTiming := Cold, results.TimingGraph
		if i >= 2 {
			wantRegime, wantTiming = results.Isolated, results.TimingEvents
		}
		if r.Regime != wantRegime || r.Timing != wantTiming {
			t.Errorf("record %d: regime %q timing %q, want %q %q", i, r.Regime, r.Timing, wantRegime, wantTiming)
		}
		if r.HasFlag(results.FlagScrubLeaked) != (i >= 2) {
			t.Errorf("record %d (%s): flags %v; the scrub check's flag belongs on the isolated records only", i, r.Regime, r.Flags)
		}
		if r.Clocks == nil || r.Clocks.Before.SMMHz != 1980 || !slices.Contains(r.Flags, results.FlagThrottled) || !slices.Contains(r.Flags, results.FlagUnderProfiler) {
			t.Errorf("record %d: clocks %+v flags %v", i, r.Clocks, r.Flags)
		}
	}
	if len(keys) != 4 {
		t.Errorf("records share keys: %v", keys)
	}
	a, b := recs[2], recs[3]
	if len(a.SamplesUS) != 9 || math.Abs(a.TrimmedMeanUS-1.2) > 1e-3 || math.Abs(b.TrimmedMeanUS-2.4) > 1e-3 {
		t.Errorf("isolated samples: A %v (%.3f), B %.3f; want 9 samples of 1.2, and 2.4 (the scrub outside the events)", a.SamplesUS, a.TrimmedMeanUS, b.TrimmedMeanUS)
	}
	if a.Control == nil || b.Verdict != "slower" {
		t.Errorf("isolated control %+v, B verdict %q", a.Control, b.Verdict)
	}
	if math.Abs(recs[0].TrimmedMeanUS-1.0) > 0.01 {
		t.Errorf("stream record of A: %.3f us, want 1.0 (warm calls back to back)", recs[0].TrimmedMeanUS)
	}
}

// A roof variant's records, stream and isolated: flagged, its own bytes,
// no flops, no verdict against the baseline; the kernel's records keep
// the point's work.
func TestRoofRecords(t *testing.T) {
	d := &fakeDevice{}
	// Outside a capture (the isolated regime's single launches) a call
	// advances the fake's clock itself.
	iso := func(name string, us float64) func(gpu.Stream, int) error {
		captured := call(d, name, us)
		return func(s gpu.Stream, k int) error {
			if d.capturing != nil || d.captures == 0 {
				return captured(s, k)
			}
			d.clock += us
			return nil
		}
	}
	var ca, cr checkLog
	e := &Engine{Dev: d, Stream: 1, Cfg: Config{MinCalls: 8, MinGraphUS: 50, Warmup: time.Millisecond, Reps: 6},
		Isolated: true, IsolatedReps: 5, Scrub: func(gpu.Stream) error { d.clock += 100; return nil }}
	p := Point{Suite: "s", Kernel: "k", Shape: "x", M: 1, Regime: Cold, Copies: 4, Footprint: 50 << 20, Bytes: 1000, Flops: 5000,
		Variants: []Variant{
			{Name: "A", Enqueue: iso("A", 2.0), Check: ca.check()},
			{Name: "read", Enqueue: iso("read", 1.0), Check: cr.check(), Roof: true, Bytes: 400},
		}}
	recs, err := e.Measure(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 {
		t.Fatalf("%d records, want 2 stream + 2 isolated", len(recs))
	}
	for _, r := range recs {
		t.Run(r.Regime+"/"+r.Variant, func(t *testing.T) {
			roof := r.Variant == "read"
			wantBytes, wantFlops := int64(1000), int64(5000)
			if roof {
				wantBytes, wantFlops = 400, 0
			}
			if r.HasFlag(results.FlagRoof) != roof || r.Bytes != wantBytes || r.Flops != wantFlops {
				t.Errorf("flags %v, %d bytes, %d flops; want roof %v, %d bytes, %d flops", r.Flags, r.Bytes, r.Flops, roof, wantBytes, wantFlops)
			}
			if _, ratio := r.Extra["ratio_vs_baseline"]; roof && (r.Verdict != "" || ratio) {
				t.Errorf("a roof got verdict %q (ratio recorded: %v); it is no rival of the baseline", r.Verdict, ratio)
			}
			if roof && math.Abs(r.GBps-400/r.TrimmedMeanUS/1e3) > 1e-9 {
				t.Errorf("roof GB/s %.4f, want its own 400 bytes over %.3f us", r.GBps, r.TrimmedMeanUS)
			}
		})
	}
}

// A point whose roof would be the baseline, a roof without bytes, or a
// kernel with bytes of its own is refused before any launch.
func TestRoofMisuse(t *testing.T) {
	for _, c := range []struct {
		name string
		vs   func(d *fakeDevice) []Variant
		want string
	}{
		{"roof first", func(d *fakeDevice) []Variant {
			return []Variant{{Name: "read", Enqueue: call(d, "read", 1), Unchecked: "x", Roof: true, Bytes: 4}, {Name: "A", Enqueue: call(d, "A", 1), Unchecked: "x"}}
		}, "put a kernel first"},
		{"roof without bytes", func(d *fakeDevice) []Variant {
			return []Variant{{Name: "A", Enqueue: call(d, "A", 1), Unchecked: "x"}, {Name: "read", Enqueue: call(d, "read", 1), Unchecked: "x", Roof: true}}
		}, "a roof names the bytes"},
		{"kernel with bytes", func(d *fakeDevice) []Variant {
			return []Variant{{Name: "A", Enqueue: call(d, "A", 1), Unchecked: "x"}, {Name: "B", Enqueue: call(d, "B", 1), Unchecked: "x", Bytes: 4}}
		}, "Bytes set on a kernel"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := &fakeDevice{}
			e := &Engine{Dev: d, Stream: 1, Cfg: Config{MinCalls: 8, MinGraphUS: 50, Warmup: time.Millisecond, Reps: 6}}
			_, err := e.Measure(Point{Suite: "s", Kernel: "k", Shape: "x", M: 1, Regime: Cold, Copies: 4, Footprint: 50 << 20, Bytes: 1000, Variants: c.vs(d)})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want one saying %q", err, c.want)
			}
			if d.captures != 0 || len(d.eagerFirst) != 0 || d.clock != 0 {
				t.Errorf("device work before the refusal: %d captures, eager %v, clock %.1f", d.captures, d.eagerFirst, d.clock)
			}
		})
	}
}

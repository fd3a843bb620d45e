// Package bench times kernels the way kernel work needs (docs/bench.md):
//
//   - Run before captured: every variant runs once eagerly and the stream
//     is synchronized before the first capture, so nothing meets its first
//     call (a peer library's lazy setup) inside a stream capture.
//
//   - Graph-timed: each variant's N calls are captured into one graph BEFORE
//     any warm-up; warm-up replays the graphs by wall clock straight into the
//     timed replays; every timed replay sits between two events queued
//     back to back with the others, so host dispatch never falls inside a
//     timed window. Per-call time = replay time / N.
//
//   - Cache regime is part of every point: "cold" rotates the calls through
//     Copies buffer sets whose bytes together exceed 3x the device's
//     last-level cache (asserted, not assumed); "hot" reuses one set.
//
//   - A/B: variants are replayed interleaved (A, B, ..., A', A, B, ..., A'),
//     at least 4 reps each (trimmed mean of the middle, package stats), and an
//     identical-code control A' (the baseline captured a second time) runs
//     beside every rung: a difference inside the control's spread is "~".
//
//   - Checked: a variant's output is compared with the reference before its
//     time is trusted. Before the warm-up each captured graph is replayed
//     once onto freshly poisoned outputs of the first and the last buffer
//     set of the rotation, and both sets are compared; after the timed
//     replays the same again. A variant whose output fails is recorded
//     FAIL with the check's message and is not timed (no samples, verdict
//     or regret entry); a failing baseline leaves the rung untimed.
//
// A suite declares points; the engine measures them and returns
// results.Records. Bytes and flops are declared per call; GB/s and TF/s are
// derived, and compared with ceilings measured in the same run.
package bench

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/results"
	"github.com/parharness/parharness/stats"
)

// Regimes (the names results records carry).
const (
	Cold = results.Cold
	Hot  = results.Hot
)

// ColdFactor is how many times the last-level cache the bytes of one cold
// rotation must exceed. With LRU-like replacement a buffer set comes back
// after (copies-1) x footprint bytes of other traffic; at 3x the cache,
// even an adaptive policy that protects a fraction of lines cannot keep a
// useful share of a set resident (the H200 copy sweep reads 97-100% of
// its ceiling from 64 MiB up with it: bench2 copy, 2026-11-29,
// results/h200-2026-11-29/copy.json).
const ColdFactor = 3

// Variant is one implementation timed at a point.
type Variant struct {
	Name string
	// Enqueue puts one call on stream s, using buffer set copy in
	// [0, Point.Copies). It must be capturable: no allocation, no sync.
	Enqueue func(s gpu.Stream, copy int) error
	// Regime overrides the point's regime in this variant's record ("":
	// the point's): attribution variants that pin some buffers to one set
	// are not cold, and must not be flagged or diffed as if they were.
	Regime string
	// Check compares the variant's output with the reference; nil only
	// when Unchecked says why there is nothing to compare.
	Check *Check
	// Unchecked is why a variant without Check has no output to compare (an
	// attribution kernel that computes nothing, an empty kernel).
	Unchecked string
	// Roof marks a reference, not a kernel: it moves Bytes a call of the
	// point's data and computes nothing (the dec suite's read of the
	// weights alone). Its record carries results.FlagRoof, Bytes and no
	// flops, and no table counts it as a cell's kernel.
	Roof  bool
	Bytes int64
}

// Check is how the engine verifies one variant's output in one buffer set
// of the cold rotation (copy k, as Enqueue numbers them).
type Check struct {
	// Prepare poisons what the variant writes in copy k and restores what
	// it reads there that another variant may have written.
	Prepare func(k int) error
	// Verify compares copy k's outputs with the reference.
	Verify func(k int) error
	// Launches names the kernel launch Prepare makes of its own (a
	// reference the check compares against), "" when it makes none; under
	// LaunchOnce it gets a row of its own before the variant's, so the
	// printed launches stay in step with a profiler's.
	Launches string
}

// Sequence is one variant that runs vs one after another per call (a
// two-pass path timed as a whole), named "a+b+...".
func Sequence(vs ...Variant) Variant {
	var names []string
	for _, v := range vs {
		names = append(names, v.Name)
	}
	return Variant{Name: strings.Join(names, "+"), Enqueue: func(s gpu.Stream, k int) error {
		for _, v := range vs {
			if err := v.Enqueue(s, k); err != nil {
				return err
			}
		}
		return nil
	}, Unchecked: "a sequence: give it the check of its combined output"}
}

// Point is one rung of a sweep: a shape, an M, a regime, and the variants
// compared there (the first is the baseline the others are judged against).
type Point struct {
	Suite, Kernel, Shape string
	M                    int
	Regime               string
	// Bytes and Flops are the point's useful work per call, recorded on
	// every variant's row: each variant's GB/s and TF/s are effective rates
	// for that same work, so rows of a rung compare like for like. A
	// variant that moves more (copy+5%) or skips the math (memonly) reads
	// as slower or faster at equal work; its own traffic is not counted.
	Bytes     int64 // bytes that must move per call (GB/s numerator)
	Flops     int64 // useful flops per call (0: not a compute kernel)
	Footprint int64 // distinct bytes one call touches (cold assertion)
	Copies    int   // buffer sets the calls rotate through
	Variants  []Variant
	Extra     map[string]float64 // recorded with every row (e.g. split-K)
}

// Config sets the protocol's knobs.
type Config struct {
	MinCalls   int           // calls per graph at least (rounded up to a multiple of Copies)
	MinGraphUS float64       // grow N until one replay takes at least this long (estimated)
	Warmup     time.Duration // wall-clock warm-up before the timed replays
	Reps       int           // timed replays per variant (>= 4)
}

// DefaultConfig is the protocol used unless a flag says otherwise.
var DefaultConfig = Config{MinCalls: 20, MinGraphUS: 2000, Warmup: 300 * time.Millisecond, Reps: 10}

// Engine measures points on one device and stream.
type Engine struct {
	Dev    gpu.Device
	Stream gpu.Stream
	Cfg    Config
	// Scrub, when set, enqueues a kernel that evicts the last-level cache
	// (the isolated regime runs it before every timed launch).
	Scrub func(s gpu.Stream) error
	// Isolated also times every cold point's checked variants in the
	// isolated regime (needs Scrub): IsolatedReps single launches each.
	Isolated     bool
	IsolatedReps int
	// IsolatedFlags are added to every isolated record (the scrub check's
	// verdict).
	IsolatedFlags []string
	// Clocks, when set, reads the device's clocks and throttle reasons;
	// Measure records them before and after every point.
	Clocks func() (results.ClockSample, []string, error)
	// Flags are added to every record (e.g. FlagUnderProfiler).
	Flags []string
	// PoisonShared, when set, fills every SM's shared memory with a NaN
	// pattern on the default stream (kernels.SharedFill) before each
	// check's launches, so a checked output that depends on shared memory
	// its kernel never wrote fails the check. Timed replays run without it.
	PoisonShared func() error
	// LaunchOnce makes Measure launch each variant once, eagerly, onto
	// poisoned outputs that it then verifies, and time nothing: the pass
	// a profiler attaches to (ncu --clock-control none -k regex:... sees
	// one checked launch per variant and point). Its records carry a check
	// and no samples.
	LaunchOnce bool
}

// NewEngine makes an engine with its own non-blocking stream.
func NewEngine(dev gpu.Device, cfg Config) (*Engine, error) {
	if cfg.Reps < 4 {
		return nil, fmt.Errorf("bench: %d reps: the A/B protocol needs at least 4 per variant", cfg.Reps)
	}
	s, err := dev.NewStream()
	if err != nil {
		return nil, fmt.Errorf("bench: create stream: %w", err)
	}
	return &Engine{Dev: dev, Stream: s, Cfg: cfg}, nil
}

// Close releases the engine's stream.
func (e *Engine) Close() error { return e.Dev.DestroyStream(e.Stream) }

// CheckCold returns an error unless the point's rotation defeats the cache.
func CheckCold(p Point, llcBytes int) error {
	if p.Regime != Cold {
		return nil
	}
	if llcBytes <= 0 {
		return fmt.Errorf("bench: %s: cold regime needs the device's last-level cache size, which is unknown", p.Shape)
	}
	rot := int64(p.Copies) * p.Footprint
	if rot < int64(ColdFactor)*int64(llcBytes) {
		return fmt.Errorf("bench: %s %s M=%d: cold regime leaked: %d copies x %d bytes = %d bytes per rotation, below %dx the %d-byte last-level cache",
			p.Kernel, p.Shape, p.M, p.Copies, p.Footprint, rot, ColdFactor, llcBytes)
	}
	return nil
}

// CopiesFor returns how many buffer sets of footprint bytes a cold rotation needs.
func CopiesFor(footprint int64, llcBytes int) int {
	need := int64(ColdFactor)*int64(llcBytes)/footprint + 1
	return int(max(need, 1))
}

type timedGraph struct {
	name    string
	graph   gpu.Graph
	samples []float64
}

// Measure runs one point and returns one record per variant, the baseline
// carrying the identical-code control and the others a verdict against it.
func (e *Engine) Measure(p Point) ([]results.Record, error) {
	if len(p.Variants) == 0 {
		return nil, fmt.Errorf("bench: %s %s: no variants", p.Kernel, p.Shape)
	}
	if p.Copies < 1 {
		p.Copies = 1
	}
	if err := CheckCold(p, e.Dev.Info().LLCBytes); err != nil {
		return nil, err
	}
	for i, v := range p.Variants {
		if v.Check == nil && v.Unchecked == "" {
			return nil, fmt.Errorf("bench: %s %s M=%d variant %s: no output check and no reason why not; every timed variant is checked", p.Kernel, p.Shape, p.M, v.Name)
		}
		switch {
		case v.Roof && i == 0:
			return nil, fmt.Errorf("bench: %s %s M=%d: the first variant, the baseline every verdict is against, is the roof %s; put a kernel first", p.Kernel, p.Shape, p.M, v.Name)
		case v.Roof && v.Bytes <= 0:
			return nil, fmt.Errorf("bench: %s %s M=%d roof %s: %d bytes a call; a roof names the bytes it moves", p.Kernel, p.Shape, p.M, v.Name, v.Bytes)
		case !v.Roof && v.Bytes != 0:
			return nil, fmt.Errorf("bench: %s %s M=%d variant %s: Bytes set on a kernel; a kernel's bytes are the point's", p.Kernel, p.Shape, p.M, v.Name)
		}
	}
	if e.LaunchOnce {
		return e.launchOnce(p)
	}
	if err := e.eagerOnce(p); err != nil {
		return nil, err
	}
	n, err := e.callsPerGraph(p)
	if err != nil {
		return nil, err
	}
	// Capture every graph before any warm-up: the baseline, the others,
	// then the baseline again as the identical-code control.
	arms := append(append([]Variant{}, p.Variants...), Variant{Name: p.Variants[0].Name + " (control)", Enqueue: p.Variants[0].Enqueue})
	var graphs []*timedGraph
	defer func() {
		for _, g := range graphs {
			g.graph.Destroy()
		}
	}()
	for _, v := range arms {
		g, err := e.capture(v, n, p.Copies)
		if err != nil {
			return nil, fmt.Errorf("bench: %s %s M=%d variant %s: %w", p.Kernel, p.Shape, p.M, v.Name, err)
		}
		graphs = append(graphs, &timedGraph{name: v.Name, graph: g})
	}
	clocksBefore, _, clockErr := e.readClocks()
	var isoSamples map[string][]float64 // the isolated regime's samples by variant name (and the control's)
	// Check every variant's output before anything is timed.
	checkCopies := CheckedCopies(p.Copies)
	failed := make([]error, len(p.Variants))
	for i, v := range p.Variants {
		failed[i] = e.check(v, graphs[i], checkCopies, "before the timed replays")
	}
	var timed []*timedGraph
	if failed[0] == nil {
		for i := range p.Variants {
			if failed[i] == nil {
				timed = append(timed, graphs[i])
			}
		}
		timed = append(timed, graphs[len(graphs)-1]) // the control
		if err := e.warmup(timed); err != nil {
			return nil, err
		}
		if err := e.timeInterleaved(timed, n); err != nil {
			return nil, fmt.Errorf("bench: %s %s M=%d: %w", p.Kernel, p.Shape, p.M, err)
		}
		if e.isolating(p) {
			var iso []Variant
			for i, v := range p.Variants {
				if failed[i] == nil {
					iso = append(iso, v)
				}
			}
			iso = append(iso, arms[len(arms)-1])
			if isoSamples, err = e.timeIsolated(iso); err != nil {
				return nil, fmt.Errorf("bench: %s %s M=%d: isolated regime: %w", p.Kernel, p.Shape, p.M, err)
			}
		}
		for i, v := range p.Variants {
			if failed[i] == nil {
				failed[i] = e.check(v, graphs[i], checkCopies, "after the timed replays")
			}
		}
	} else {
		for i := 1; i < len(p.Variants); i++ {
			if failed[i] == nil {
				failed[i] = fmt.Errorf("not timed: the baseline %s failed its output check", p.Variants[0].Name)
			}
		}
	}
	var control *results.Control // nil when the baseline failed, before or after the timed replays
	if failed[0] == nil {
		var err error
		if control, err = results.NewControl(p.Variants[0].Name, graphs[0].samples, graphs[len(graphs)-1].samples); err != nil {
			return nil, err
		}
	}
	var clocks *results.RecordClocks
	if clockErr == nil {
		if after, throttle, err := e.readClocks(); err == nil {
			clocks = &results.RecordClocks{Before: clocksBefore, After: after, Throttle: throttle}
		}
	}
	flags := append([]string{}, e.Flags...)
	if clocks != nil && len(clocks.Throttle) > 0 {
		flags = append(flags, results.FlagThrottled)
	}
	var recs []results.Record
	for i, v := range p.Variants {
		r := pointRecord(p, v, v.Name, flags)
		r.Timing, r.Clocks = results.TimingGraph, clocks
		r.Extra["calls_per_graph"] = float64(n)
		r.Extra["copies"] = float64(p.Copies)
		switch {
		case failed[i] != nil:
			r.Check = &results.Check{Status: results.CheckFail, Copies: checkCopies, Reason: failed[i].Error()}
			recs = append(recs, r)
			continue
		case v.Check == nil:
			r.Check = &results.Check{Status: results.CheckNone, Reason: v.Unchecked}
		default:
			r.Check = &results.Check{Status: results.CheckPass, Copies: checkCopies}
		}
		r.SamplesUS = graphs[i].samples
		if err := r.Derive(); err != nil {
			return nil, err
		}
		switch {
		case i == 0:
			r.Control = control
		case v.Roof:
			// A reference, not a rival: no verdict against the baseline.
		case control == nil:
			// The baseline failed its check after the timed replays: its
			// times mean nothing, so the others get no verdict against it.
			r.Extra["no_verdict_baseline_failed"] = 1
		default:
			if err := setVerdict(&r, graphs[0].samples, graphs[i].samples, control); err != nil {
				return nil, err
			}
		}
		recs = append(recs, r)
	}
	if isoSamples != nil {
		iso, err := isolatedRecords(recs, isoSamples, p.Variants[0].Name+" (control)")
		if err != nil {
			return nil, err
		}
		for i := range iso {
			for _, f := range e.IsolatedFlags {
				iso[i].AddFlag(f)
			}
		}
		recs = append(recs, iso...)
	}
	return recs, nil
}

// setVerdict judges variant samples against the baseline's under the
// control's noise figure (stats.Compare) and records the call, the ratio
// and the U test's p on r.
func setVerdict(r *results.Record, baseline, samples []float64, control *results.Control) error {
	vd, err := stats.Compare(baseline, samples, control.SpreadPct)
	if err != nil {
		return err
	}
	r.Verdict = vd.Call
	r.Extra["ratio_vs_baseline"] = vd.Ratio
	r.Extra["p_value"] = vd.PValue
	return nil
}

// isolating reports whether point p is also timed in the isolated regime.
func (e *Engine) isolating(p Point) bool {
	return e.Isolated && e.Scrub != nil && p.Regime == Cold
}

// readClocks samples the clocks when the engine has a source.
func (e *Engine) readClocks() (results.ClockSample, []string, error) {
	if e.Clocks == nil {
		return results.ClockSample{}, nil, fmt.Errorf("no clock source")
	}
	return e.Clocks()
}

// timeIsolated times each variant's single calls on buffer set 0 after
// the engine's scrub (TimeIsolatedArms), for IsolatedReps rounds.
func (e *Engine) timeIsolated(vs []Variant) (map[string][]float64, error) {
	arms := make([]IsolatedArm, len(vs))
	for i, v := range vs {
		arms[i] = IsolatedArm{Name: v.Name, Scrub: e.Scrub, Enqueue: v.Enqueue}
	}
	return e.TimeIsolatedArms(arms, max(e.IsolatedReps, e.Cfg.Reps))
}

// IsolatedArm is one arm of TimeIsolatedArms: a launch on buffer set 0,
// after Scrub (nil: none, so the launch finds the cache as the previous
// launch left it).
type IsolatedArm struct {
	Name    string
	Scrub   func(gpu.Stream) error
	Enqueue func(gpu.Stream, int) error
}

// TimeIsolatedArms times each arm's single launch between two events,
// its scrub before them, interleaved round-robin over the arms for reps
// rounds; the samples are in microseconds by arm name. The host waits for
// each launch, so none queues behind another's events.
func (e *Engine) TimeIsolatedArms(arms []IsolatedArm, reps int) (map[string][]float64, error) {
	names := map[string]bool{}
	for _, arm := range arms {
		if names[arm.Name] {
			return nil, fmt.Errorf("bench: isolated arms: %q twice; their samples would pool", arm.Name)
		}
		names[arm.Name] = true
	}
	a, b, err := e.eventPair()
	if err != nil {
		return nil, err
	}
	defer e.Dev.DestroyEvent(a)
	defer e.Dev.DestroyEvent(b)
	out := map[string][]float64{}
	for r := 0; r < reps; r++ {
		for _, arm := range arms {
			if arm.Scrub != nil {
				if err := arm.Scrub(e.Stream); err != nil {
					return nil, fmt.Errorf("scrub before %s: %w", arm.Name, err)
				}
			}
			if err := e.Dev.Record(a, e.Stream); err != nil {
				return nil, err
			}
			if err := arm.Enqueue(e.Stream, 0); err != nil {
				return nil, fmt.Errorf("%s: %w", arm.Name, err)
			}
			if err := e.Dev.Record(b, e.Stream); err != nil {
				return nil, err
			}
			ms, err := e.Dev.Elapsed(a, b)
			if err != nil {
				return nil, fmt.Errorf("timing %s: %w", arm.Name, err)
			}
			out[arm.Name] = append(out[arm.Name], float64(ms)*1000)
		}
	}
	return out, nil
}

// isolatedRecords are the isolated regime's records of a point: a copy of
// each timed (checked, passing) stream record with the isolated samples,
// the baseline carrying the isolated control and the others a verdict
// against the isolated baseline.
func isolatedRecords(stream []results.Record, samples map[string][]float64, controlName string) ([]results.Record, error) {
	if len(stream) == 0 {
		return nil, nil
	}
	base := stream[0]
	var control *results.Control
	if s, ok := samples[base.Variant]; ok {
		var err error
		if control, err = results.NewControl(base.Variant, s, samples[controlName]); err != nil {
			return nil, err
		}
	}
	var out []results.Record
	for i, sr := range stream {
		s, ok := samples[sr.Variant]
		if !ok || sr.Failed() || sr.Regime != Cold {
			continue
		}
		r := sr
		r.Regime, r.Timing = results.Isolated, results.TimingEvents
		r.Control, r.Verdict = nil, ""
		r.Extra = cloneMap(sr.Extra)
		delete(r.Extra, "ratio_vs_baseline")
		delete(r.Extra, "p_value")
		r.Extra["calls_per_graph"], r.Extra["copies"] = 1, 1
		r.Flags = slices.Clone(sr.Flags)
		r.SamplesUS = s
		if err := r.Derive(); err != nil {
			return nil, err
		}
		switch {
		case i == 0:
			r.Control = control
		case r.HasFlag(results.FlagRoof): // a reference: no verdict
		case control != nil:
			if err := setVerdict(&r, samples[base.Variant], s, control); err != nil {
				return nil, err
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// eagerOnce runs every variant once, outside any capture, and waits for
// it: a library or driver that allocates or loads on its first call (a
// vendor GEMM's plan, a module's lazy load) must not meet that call inside
// a stream capture, where allocation is illegal.
func (e *Engine) eagerOnce(p Point) error {
	for _, v := range p.Variants {
		if err := v.Enqueue(e.Stream, 0); err != nil {
			return fmt.Errorf("bench: %s %s M=%d variant %s: the eager run before capture: %w", p.Kernel, p.Shape, p.M, v.Name, err)
		}
	}
	if err := e.Dev.StreamSynchronize(e.Stream); err != nil {
		return fmt.Errorf("bench: %s %s M=%d: the eager runs before capture: %w", p.Kernel, p.Shape, p.M, err)
	}
	return nil
}

// launchOnce is Measure under LaunchOnce: each variant launched once on
// copy 0, its outputs poisoned before and verified after, in the order of
// p.Variants (a profiler's launch IDs follow it); a check that launches a
// reference of its own (Check.Launches) gets a row before the variant's.
// A failed check is the record's. A failed preparation or launch ends the
// point, returning the rows of what did launch with the error.
func (e *Engine) launchOnce(p Point) ([]results.Record, error) {
	var recs []results.Record
	flags := append(slices.Clone(e.Flags), results.FlagLaunchOnce)
	row := func(v Variant, name string) results.Record { return pointRecord(p, v, name, flags) }
	fail := func(v Variant, what string, err error) ([]results.Record, error) {
		return recs, fmt.Errorf("bench: %s %s M=%d variant %s: %s: %w", p.Kernel, p.Shape, p.M, v.Name, what, err)
	}
	for _, v := range p.Variants {
		if v.Check != nil {
			if v.Check.Launches != "" {
				ref := row(v, v.Name+" check: "+v.Check.Launches)
				ref.Check = &results.Check{Status: results.CheckNone, Reason: "the check's own launch of its reference"}
				recs = append(recs, ref)
			}
			if err := v.Check.Prepare(0); err != nil {
				return fail(v, "preparing the check", err)
			}
			if err := e.poisonShared(); err != nil {
				return fail(v, "preparing the check", err)
			}
			if err := e.Dev.Synchronize(); err != nil {
				return fail(v, "preparing the check", err)
			}
		}
		if err := v.Enqueue(e.Stream, 0); err != nil {
			return fail(v, "the launch", err)
		}
		if err := e.Dev.StreamSynchronize(e.Stream); err != nil {
			return fail(v, "the launch or its completion", err)
		}
		r := row(v, v.Name)
		switch {
		case v.Check == nil:
			r.Check = &results.Check{Status: results.CheckNone, Reason: v.Unchecked}
		default:
			r.Check = &results.Check{Status: results.CheckPass, Copies: []int{0}}
			if err := v.Check.Verify(0); err != nil {
				r.Check = &results.Check{Status: results.CheckFail, Copies: []int{0}, Reason: err.Error()}
			}
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// pointRecord is the record of variant v at point p, named name: the
// point's work (a roof's own bytes and no flops, flagged), its Extra
// copied, flags copied; the caller adds the check and the times.
func pointRecord(p Point, v Variant, name string, flags []string) results.Record {
	r := results.Record{Suite: p.Suite, Kernel: p.Kernel, Variant: name, Shape: p.Shape, M: p.M, Regime: cmp.Or(v.Regime, p.Regime),
		Bytes: p.Bytes, Flops: p.Flops, Extra: cloneMap(p.Extra), Flags: slices.Clone(flags)}
	if v.Roof {
		r.Bytes, r.Flops = v.Bytes, 0
		r.AddFlag(results.FlagRoof)
	}
	return r
}

// CheckedCopies are the buffer sets of a rotation of copies sets that the
// output checks compare: the first, the middle and the last (a family may
// give the middle and last sets other inputs than the first, so a launch
// that reads a fixed set is caught).
func CheckedCopies(copies int) []int {
	out := []int{0}
	for _, k := range []int{copies / 2, copies - 1} {
		if k > out[len(out)-1] {
			out = append(out, k)
		}
	}
	return out
}

// MiddleCheckedCopy is the middle one of CheckedCopies (-1 when only the
// first and last are checked): the set a family gives other inputs than
// the first.
func MiddleCheckedCopy(copies int) int {
	if cs := CheckedCopies(copies); len(cs) == 3 {
		return cs[1]
	}
	return -1
}

// check replays v's captured graph once onto poisoned outputs of the
// checked copies and verifies them; nil for a variant with nothing to check.
func (e *Engine) check(v Variant, g *timedGraph, copies []int, when string) error {
	if v.Check == nil {
		return nil
	}
	for _, k := range copies {
		if err := v.Check.Prepare(k); err != nil {
			return fmt.Errorf("preparing copy %d for the check %s: %w", k, when, err)
		}
	}
	if err := e.poisonShared(); err != nil {
		return fmt.Errorf("preparing the check %s: %w", when, err)
	}
	// The poison and restored inputs went to the default stream, which the
	// engine's non-blocking stream does not wait for.
	if err := e.Dev.Synchronize(); err != nil {
		return fmt.Errorf("preparing the check %s: %w", when, err)
	}
	if err := g.graph.Launch(e.Stream); err != nil {
		return fmt.Errorf("check replay %s: %w", when, err)
	}
	if err := e.Dev.StreamSynchronize(e.Stream); err != nil {
		return fmt.Errorf("check replay %s: %w", when, err)
	}
	for _, k := range copies {
		if err := v.Check.Verify(k); err != nil {
			return fmt.Errorf("output of copy %d %s: %w", k, when, err)
		}
	}
	return nil
}

func (e *Engine) poisonShared() error {
	if e.PoisonShared == nil {
		return nil
	}
	return e.PoisonShared()
}

func cloneMap(m map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(m)+4)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// callsPerGraph picks N: a multiple of Copies, at least MinCalls, and long
// enough (by a one-graph probe of the baseline) that a replay takes
// MinGraphUS, so event resolution and launch gaps are noise.
func (e *Engine) callsPerGraph(p Point) (int, error) {
	n := roundUp(max(e.Cfg.MinCalls, p.Copies), p.Copies)
	g, err := e.capture(p.Variants[0], n, p.Copies)
	if err != nil {
		return 0, fmt.Errorf("bench: %s %s M=%d probe: %w", p.Kernel, p.Shape, p.M, err)
	}
	defer g.Destroy()
	var best float64
	for i := 0; i < 3; i++ {
		us, err := e.replayOnce(g)
		if err != nil {
			return 0, err
		}
		if i == 0 || us < best {
			best = us
		}
	}
	if best < e.Cfg.MinGraphUS && best > 0 {
		grow := int(e.Cfg.MinGraphUS/best) + 1
		n = roundUp(n*grow, p.Copies)
	}
	return n, nil
}

func roundUp(n, m int) int { return (n + m - 1) / m * m }

func (e *Engine) capture(v Variant, n, copies int) (gpu.Graph, error) {
	if err := e.Dev.BeginCapture(e.Stream); err != nil {
		return nil, fmt.Errorf("begin capture: %w", err)
	}
	var encErr error
	for i := 0; i < n && encErr == nil; i++ {
		encErr = v.Enqueue(e.Stream, i%copies)
	}
	g, err := e.Dev.EndCapture(e.Stream)
	if encErr != nil {
		if g != nil {
			g.Destroy()
		}
		return nil, fmt.Errorf("enqueue during capture: %w", encErr)
	}
	if err != nil {
		return nil, fmt.Errorf("end capture: %w", err)
	}
	return g, nil
}

// replayOnce times one replay (µs), synchronously; used only for sizing.
func (e *Engine) replayOnce(g gpu.Graph) (float64, error) {
	a, b, err := e.eventPair()
	if err != nil {
		return 0, err
	}
	defer e.Dev.DestroyEvent(a)
	defer e.Dev.DestroyEvent(b)
	if err := e.Dev.Record(a, e.Stream); err != nil {
		return 0, err
	}
	if err := g.Launch(e.Stream); err != nil {
		return 0, err
	}
	if err := e.Dev.Record(b, e.Stream); err != nil {
		return 0, err
	}
	ms, err := e.Dev.Elapsed(a, b)
	return float64(ms) * 1000, err
}

func (e *Engine) eventPair() (gpu.Event, gpu.Event, error) {
	a, err := e.Dev.NewEvent()
	if err != nil {
		return 0, 0, err
	}
	b, err := e.Dev.NewEvent()
	if err != nil {
		e.Dev.DestroyEvent(a)
		return 0, 0, err
	}
	return a, b, nil
}

// warmup replays the graphs round-robin until the wall-clock budget is spent.
func (e *Engine) warmup(graphs []*timedGraph) error {
	deadline := time.Now().Add(e.Cfg.Warmup)
	for first := true; first || time.Now().Before(deadline); first = false {
		for _, g := range graphs {
			if err := g.graph.Launch(e.Stream); err != nil {
				return fmt.Errorf("bench: warm-up replay of %s: %w", g.name, err)
			}
		}
		if err := e.Dev.StreamSynchronize(e.Stream); err != nil {
			return fmt.Errorf("bench: warm-up: %w", err)
		}
	}
	return nil
}

// timeInterleaved queues Reps rounds of (every graph between its own event
// pair) without waiting, so the device runs them back to back while the
// host stays ahead, then reads every window.
func (e *Engine) timeInterleaved(graphs []*timedGraph, n int) error {
	type window struct {
		g    *timedGraph
		a, b gpu.Event
	}
	var ws []window
	defer func() {
		for _, w := range ws {
			e.Dev.DestroyEvent(w.a)
			e.Dev.DestroyEvent(w.b)
		}
	}()
	for r := 0; r < e.Cfg.Reps; r++ {
		for _, g := range graphs {
			a, b, err := e.eventPair()
			if err != nil {
				return err
			}
			ws = append(ws, window{g, a, b})
		}
	}
	for _, w := range ws {
		if err := e.Dev.Record(w.a, e.Stream); err != nil {
			return err
		}
		if err := w.g.graph.Launch(e.Stream); err != nil {
			return fmt.Errorf("replay %s: %w", w.g.name, err)
		}
		if err := e.Dev.Record(w.b, e.Stream); err != nil {
			return err
		}
	}
	for _, w := range ws {
		ms, err := e.Dev.Elapsed(w.a, w.b)
		if err != nil {
			return fmt.Errorf("timing %s: %w", w.g.name, err)
		}
		w.g.samples = append(w.g.samples, float64(ms)*1000/float64(n))
	}
	return nil
}

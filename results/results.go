// Package results is the results document of one parharness run and
// everything that reads it: the file format (Write, Read), the comparison
// of two runs (Diff), the Go benchmark format for benchstat (WriteBenchfmt)
// and plots (Plot). It knows nothing of GPUs; the bench engine fills a
// Document and the CLI writes it.
//
// # The document
//
// One JSON file per run (docs/bench.md): schema version, tool version
// and git commit, the command line, the device with its clocks, the
// ceilings measured in the same run, code-object hashes, the seed, every
// gate's outcome, and one Record per (suite, kernel, variant, shape, M,
// regime) with the raw per-call samples and the figures derived from them.
//
// The file is written for git diff and code review: keys in a fixed order
// (struct fields in declaration order, map keys sorted), records sorted by
// (suite, kernel, shape, M, variant, regime), gates by name, ceilings by
// name, two-space indent, one trailing newline. Writing the same Document
// twice gives the same bytes.
//
// # Versioning
//
// SchemaVersion changes when a field changes meaning or is removed; Read
// refuses a file of another version rather than guess. Adding an optional
// field does not change the version: Read ignores fields it does not know.
//
// # Invariants (Validate; Write and Read enforce them)
//
//   - every record has a suite, kernel, variant and shape, M >= 0 and a
//     regime of "cold" or "hot"; no two records share a Key;
//   - samples are positive and finite, derived figures finite; a record
//     whose output check failed (Check.Status FAIL) has no samples: it was
//     not timed;
//   - every gate has a name, a status PASS, FAIL, SKIP or ERROR (could not
//     run), and no two
//     gates share a name.
package results

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// SchemaVersion is the version of the document this package writes and reads.
const SchemaVersion = 1

// Cache regimes of a record (docs/bench.md).
//
// Cold is the stream regime: calls back to back in one graph, rotating
// through buffer sets of more than 3x the last-level cache, as serving
// runs them. Isolated times each call alone, between events, after a
// kernel has scrubbed the cache: no overlap with a neighbour's tail, no
// prefetch from the previous call; what a profiler's flush-before-each-
// kernel measurement sees (plus the launch gap inside the events).
const (
	Cold     = "cold"     // stream regime: bytes touched per rotation exceed 3x the last-level cache
	Hot      = "hot"      // cache-resident, only where serving is cache-resident
	Isolated = "isolated" // one call at a time after a cache scrub, each timed with its own events
)

// Timing modes of a record: how its samples were taken.
const (
	TimingGraph  = "graph"  // replays of a captured graph of N calls, per-call = replay / N
	TimingEvents = "events" // one launch between two events, the scrub before it outside them
)

// RecordClocks are the device's clocks around one point's measurement and
// the throttle reasons NVML reported (none: not throttled).
type RecordClocks struct {
	Before   ClockSample `json:"before"`
	After    ClockSample `json:"after"`
	Throttle []string    `json:"throttle,omitempty"`
}

// Gate statuses, as package gates writes them.
const (
	Pass = "PASS"
	Fail = "FAIL"
	Skip = "SKIP"
)

// Names of the ceilings the harness measures in every run.
const (
	CeilingCopyGBps   = "copy_gbps"   // device-to-device copy, read+write bytes, GB/s
	CeilingFP8TFlops  = "fp8_tflops"  // fp8 matrix peak, TF/s
	CeilingBF16TFlops = "bf16_tflops" // bf16 matrix peak, TF/s
)

// FlagAboveRoofline marks a cold record faster than the copy ceiling allows:
// the cold regime leaked (docs/bench.md).
const FlagAboveRoofline = "above-roofline"

// FlagRoof marks a record that times a roof, not a kernel: a reference
// that moves part of its point's data (its Bytes) and computes nothing,
// such as the dec suite's read of the weights alone. It is never a cell's
// kernel in the peer tables, and its flops are zero.
const FlagRoof = "roof"

// FlagUnderProfiler marks a record timed with a profiler or sanitizer
// injected into the process (bench2 --allow-profiler): its times include
// the tool's overhead.
const FlagUnderProfiler = "under-profiler"

// FlagLaunchOnce marks a record of bench2 --launch-once: one checked
// launch a variant, for a profiler to capture, and no time.
const FlagLaunchOnce = "launch-once"

// FlagGridCapped marks a record of a run with bench2 --max-grid: the
// kernels that size their grid to the device ran on fewer blocks than it
// holds, a probe rather than the deployed launch.
const FlagGridCapped = "grid-capped"

// FlagSharedUnpoisoned marks the records of a bench2 run whose checks ran
// without the shared-memory poison (kernels.SharedFill: the build has no
// fill kernel): a checked output there may depend on shared memory its
// kernel never wrote.
const FlagSharedUnpoisoned = "shared-unpoisoned"

// FlagThrottled marks a record during which the device reported a
// throttle reason other than idle.
const FlagThrottled = "throttled"

// FlagRegimeLeaked marks the records of a run whose eviction check failed:
// a streaming read at 3x and 6x the last-level cache disagreed, so the
// rotation did not make every call cold.
const FlagRegimeLeaked = "regime-leaked"

// EvictionCheck is a run's proof that its stream (cold) rotation evicts
// the last-level cache: one copy's per-call time rotated through 3x and
// through 6x the cache, which agree within NoisePct when it does.
type EvictionCheck struct {
	BytesPerCall int64   `json:"bytes_per_call"`
	Rot3xUS      float64 `json:"rot3x_us"`
	Rot6xUS      float64 `json:"rot6x_us"`
	DiffPct      float64 `json:"diff_pct"`  // 100 x (3x / 6x - 1)
	NoisePct     float64 `json:"noise_pct"` // the two points' control spreads summed, at least 1
	OK           bool    `json:"ok"`
}

// FlagScrubLeaked marks the isolated records of a run whose scrub check
// failed: the scrub did not evict what the launch after it reads.
const FlagScrubLeaked = "scrub-leaked"

// ScrubCheck is a run's proof that the isolated regime's cache scrub
// evicts: one copy timed alone after the scrub, after a scrub twice as
// large, and right after four runs of the same copy (hot), interleaved.
// It holds when the larger scrub does not make the copy slower and the
// hot copy is faster, each judged by stats.Compare against the scrubbed
// arm's identical control (NoisePct).
type ScrubCheck struct {
	Scrub           string  `json:"scrub"` // what the run's scrub does
	BytesPerCall    int64   `json:"bytes_per_call"`
	ScrubUS         float64 `json:"scrub_us"`          // trimmed means of the single launches: after the scrub,
	Scrub2xUS       float64 `json:"scrub2x_us"`        // after the doubled scrub,
	HotUS           float64 `json:"hot_us"`            // right after four runs of the same copy
	Scrub2xDeltaPct float64 `json:"scrub2x_delta_pct"` // 100 x (Scrub2xUS / ScrubUS - 1)
	HotDeltaPct     float64 `json:"hot_delta_pct"`     // 100 x (HotUS / ScrubUS - 1)
	NoisePct        float64 `json:"noise_pct"`         // the scrubbed arm against its identical control
	OK              bool    `json:"ok"`
	Why             string  `json:"why,omitempty"` // the failed condition when !OK
}

// Document is one run.
type Document struct {
	Schema        int               `json:"schema"`
	Tool          string            `json:"tool"`   // parharness version
	Commit        string            `json:"commit"` // git commit of the tree that ran, "-dirty" suffixed if so
	Date          string            `json:"date"`   // RFC 3339, when the run started
	Command       []string          `json:"command"`
	Partial       bool              `json:"partial,omitempty"` // the run stopped early; see PartialReason
	PartialReason string            `json:"partial_reason,omitempty"`
	Device        *Device           `json:"device,omitempty"` // nil: no device was opened
	Seed          uint64            `json:"seed"`
	CodeObjects   map[string]string `json:"code_objects,omitempty"` // path -> sha256 (hex)
	Ceilings      []Ceiling         `json:"ceilings,omitempty"`
	// Eviction is the run's check that its stream rotation evicts the
	// last-level cache (bench runs with cold points).
	Eviction *EvictionCheck `json:"eviction,omitempty"`
	// ScrubCheck is the run's check that the isolated regime's scrub
	// evicts (bench runs that time the isolated regime).
	ScrubCheck *ScrubCheck `json:"scrub_check,omitempty"`
	// Profiler names the profiler or sanitizer injected into a bench run
	// that was allowed to time under it ("" : none detected).
	Profiler string       `json:"profiler,omitempty"`
	Gates    []GateRecord `json:"gates,omitempty"`
	Records  []Record     `json:"records"`

	// Shard is set on a document that measured one deterministic part of a
	// sweep (bench2 --shard); Planned then lists every point the whole
	// sweep enumerated (PointKey), so Merge can tell a missing point.
	Shard   *Shard   `json:"shard,omitempty"`
	Planned []string `json:"planned,omitempty"`
	// DeviceRuns are the per-device runs of a multi-device command (gate
	// or bench2 --devices), one per device in the order given.
	DeviceRuns []DeviceRun `json:"device_runs,omitempty"`
}

// Shard is part Index (from 0) of Count of a sweep's points.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// String is "i/n".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// DeviceRun is what one device's child process of a multi-device command
// produced: its device, how it ended, and its gates and ceilings (its
// bench records are in Document.Records, each naming the device).
type DeviceRun struct {
	Selector string       `json:"selector"`         // the --device value the child ran with
	Device   *Device      `json:"device,omitempty"` // nil: the child never opened it
	Exit     int          `json:"exit"`             // the child's exit code (-1: killed or did not start)
	Status   string       `json:"status"`           // Pass, Fail, or Error (could not run, faulted, hung)
	Reason   string       `json:"reason,omitempty"`
	Seconds  float64      `json:"seconds"`
	Gates    []GateRecord `json:"gates,omitempty"`
	Ceilings []Ceiling    `json:"ceilings,omitempty"`
	// Eviction and ScrubCheck are the child's checks of its cache regimes.
	Eviction   *EvictionCheck `json:"eviction,omitempty"`
	ScrubCheck *ScrubCheck    `json:"scrub_check,omitempty"`
}

// Error is the status of a device run that could not run or did not
// finish: no device, a fault, a hang.
const Error = "ERROR"

// PointKey names one point of a sweep: the unit that shards split and
// that Planned lists.
func PointKey(suite, shape string, m int) string {
	return fmt.Sprintf("%s/shape=%s/M=%d", suite, shape, m)
}

// Device describes the GPU a run used.
type Device struct {
	Backend     string        `json:"backend"` // "cuda" or "hip"
	Name        string        `json:"name"`
	Arch        string        `json:"arch"` // "sm_90", "gfx1201"
	Driver      string        `json:"driver"`
	SMs         int           `json:"sms"`           // the unit the driver reports: SMs, or on HIP CUs (WGPs on gfx10+)
	CUs         int           `json:"cus,omitempty"` // HIP: compute units (gpu.Info.CUs)
	ClockMHz    int           `json:"clock_mhz"`
	MemClockMHz int           `json:"mem_clock_mhz"`
	MemBusBits  int           `json:"mem_bus_bits"`
	L2Bytes     int           `json:"l2_bytes"`
	LLCBytes    int           `json:"llc_bytes"` // last-level cache: L2 on Hopper, MALL on RDNA4
	TotalMem    uint64        `json:"total_mem"`
	Clocks      []ClockSample `json:"clocks,omitempty"` // in the order taken
}

// ClockSample is one reading of the device's clocks and sensors.
type ClockSample struct {
	When   string  `json:"when"` // "before <bench>" or "after <bench>"
	SMMHz  int     `json:"sm_mhz"`
	MemMHz int     `json:"mem_mhz"`
	TempC  int     `json:"temp_c"`
	PowerW float64 `json:"power_w"`
}

// Ceiling is a roofline figure measured on the same device in the same run.
type Ceiling struct {
	Name  string  `json:"name"` // CeilingCopyGBps, ...
	Value float64 `json:"value"`
	Unit  string  `json:"unit"` // "GB/s", "TF/s"
	How   string  `json:"how"`  // what was run to measure it
}

// GateRecord is one gate's outcome (gates.Result is this type).
type GateRecord struct {
	Gate     string   `json:"gate"`
	Status   string   `json:"status"`           // Pass, Fail, Skip or Error (could not run)
	Reason   string   `json:"reason,omitempty"` // SKIP reason or first failure
	Failures []string `json:"failures,omitempty"`
	Notes    []string `json:"notes,omitempty"`
	// Metrics are the gate's figures; a per-case figure's key names its
	// case (Case.Key), never its seed, so runs share their keys.
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// CaseSeeds are the seeds each case drew its inputs from, by
	// Case.String(): the values that let one case be replayed.
	CaseSeeds map[string]uint64 `json:"case_seeds,omitempty"`
	Seed      uint64            `json:"seed"`
	Seconds   float64           `json:"seconds"`
}

// Record is one measured point: a kernel variant at one shape, M and cache
// regime.
//
// Bytes counts every byte a call reads or writes in DRAM terms (weights,
// activations, scales, outputs), so GBps compares with the copy ceiling,
// which also counts read+write. Flops counts 2·M·N·K for a GEMM (0 where it
// means nothing).
type Record struct {
	Suite   string `json:"suite"`
	Kernel  string `json:"kernel"`
	Variant string `json:"variant"`
	Shape   string `json:"shape"`
	M       int    `json:"m"`
	Regime  string `json:"regime"` // Cold (the stream regime), Hot or Isolated

	SamplesUS     []float64 `json:"samples_us"` // per-call µs, one per rep, in the order measured
	MedianUS      float64   `json:"median_us"`
	MeanUS        float64   `json:"mean_us"`
	TrimmedMeanUS float64   `json:"trimmed_mean_us"` // the figure of record (package stats)

	Bytes  int64   `json:"bytes"`
	Flops  int64   `json:"flops,omitempty"`
	GBps   float64 `json:"gbps"`
	TFlops float64 `json:"tflops,omitempty"`

	// Check is how the variant's output was verified before its time was
	// trusted (bench records; optional: nil when the file carries none).
	Check *Check `json:"check,omitempty"`

	// Device is the --device selector of the run that measured the record,
	// in a document that merges several devices' runs ("" otherwise).
	Device string `json:"device,omitempty"`

	// Timing is how the samples were taken (TimingGraph, TimingEvents; ""
	// in files written before it was recorded).
	Timing string `json:"timing,omitempty"`
	// Clocks are the clocks before and after the point and any throttling
	// (nil where the device has no clock source, e.g. without NVML).
	Clocks *RecordClocks `json:"clocks,omitempty"`

	Flags   []string           `json:"flags,omitempty"`   // FlagAboveRoofline, ...
	Control *Control           `json:"control,omitempty"` // identical-code control beside this rung
	Verdict string             `json:"verdict,omitempty"` // against the rung's baseline, from stats.Compare
	Extra   map[string]float64 `json:"extra,omitempty"`   // bench-specific figures (split-K count, waves, ...)
}

// Check statuses of a record.
const (
	CheckPass = "PASS" // the output equalled the reference before and after the timed replays
	CheckFail = "FAIL" // it did not: the record has no samples, verdict or regret entry
	CheckNone = "NONE" // nothing to compare (an attribution kernel, a vendor peer); Reason says why
)

// Check is the output check of one bench record: the buffer sets of the
// cold rotation it compared (the first and the last), once before the
// timed replays and once after them.
type Check struct {
	Status string `json:"status"`           // CheckPass, CheckFail or CheckNone
	Copies []int  `json:"copies,omitempty"` // rotation copies compared
	Reason string `json:"reason,omitempty"` // FAIL: the check's first failures; NONE: why nothing is compared
}

// Failed reports whether the record's output check failed.
func (r *Record) Failed() bool { return r.Check != nil && r.Check.Status == CheckFail }

// Control is an identical-code control: variant Of timed against itself,
// interleaved like a real A/B, beside a rung of the ladder.
type Control struct {
	Of         string    `json:"of"` // the variant that ran on both arms
	ASamplesUS []float64 `json:"a_samples_us"`
	BSamplesUS []float64 `json:"b_samples_us"`
	Ratio      float64   `json:"ratio"`      // trimmed mean B / A; ideally 1
	SpreadPct  float64   `json:"spread_pct"` // stats.ControlSpread: the noise floor of this rung
}

// Key identifies a record within a document and across documents, in the
// form of a Go benchmark name: "suite/kernel/shape=S/M=8/variant=V/regime=cold".
func (r *Record) Key() string { return recordKey(r.Suite, r.Kernel, r.Shape, r.M, r.Variant, r.Regime) }

// baseKey is Key without the regime: rows that match on it but not on Key
// measured the same thing in a different regime.
func (r *Record) baseKey() string { return recordKey(r.Suite, r.Kernel, r.Shape, r.M, r.Variant, "") }

// rungKey identifies the rung a record was measured on: its key without
// the variant and the regime (the variants of a point share the point's
// control, a hot attribution variant included: its regime differs from
// the cold baseline that carries the control).
func (r *Record) rungKey() string { return recordKey(r.Suite, r.Kernel, r.Shape, r.M, "", "") }

// recordKey is the one spelling of a record's identity; an empty variant or
// regime is left out (baseKey, rungKey).
func recordKey(suite, kernel, shape string, m int, variant, regime string) string {
	k := fmt.Sprintf("%s/%s/shape=%s/M=%d", suite, kernel, shape, m)
	if variant != "" {
		k += "/variant=" + variant
	}
	if regime != "" {
		k += "/regime=" + regime
	}
	return k
}

// compareRecords orders records by (suite, kernel, shape, M, variant, regime).
func compareRecords(a, b Record) int {
	return cmp.Or(
		cmp.Compare(a.Suite, b.Suite),
		cmp.Compare(a.Kernel, b.Kernel),
		cmp.Compare(a.Shape, b.Shape),
		cmp.Compare(a.M, b.M),
		cmp.Compare(a.Variant, b.Variant),
		cmp.Compare(a.Regime, b.Regime),
	)
}

// Ceiling returns the ceiling called name.
func (d *Document) Ceiling(name string) (Ceiling, bool) {
	for _, c := range d.Ceilings {
		if c.Name == name {
			return c, true
		}
	}
	return Ceiling{}, false
}

// Sort puts records, gates and ceilings in the document's canonical order.
func (d *Document) Sort() {
	slices.SortStableFunc(d.Records, compareRecords)
	slices.SortStableFunc(d.Gates, func(a, b GateRecord) int { return cmp.Compare(a.Gate, b.Gate) })
	slices.SortStableFunc(d.Ceilings, func(a, b Ceiling) int { return cmp.Compare(a.Name, b.Name) })
}

// maxProblems bounds the list of problems Validate reports.
const maxProblems = 10

// Validate checks the invariants listed in the package doc and reports
// every problem found (up to ten), each naming its record or gate.
func (d *Document) Validate() error {
	var probs []string
	add := func(format string, args ...any) {
		if len(probs) <= maxProblems {
			probs = append(probs, fmt.Sprintf(format, args...))
		}
	}
	finite := func(where, field string, x float64) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			add("%s: %s is %v", where, field, x)
		}
	}
	if d.Device != nil {
		for i, c := range d.Device.Clocks {
			finite(fmt.Sprintf("device clock sample %d (%s)", i, c.When), "power_w", c.PowerW)
		}
	}
	for i, c := range d.Ceilings {
		where := fmt.Sprintf("ceiling %d (%s)", i, c.Name)
		if c.Name == "" {
			add("ceiling %d has no name", i)
		}
		finite(where, "value", c.Value)
	}

	gates := map[string]int{}
	for i, g := range d.Gates {
		where := fmt.Sprintf("gate %d (%s)", i, g.Gate)
		if g.Gate == "" {
			add("gate %d has no name", i)
		} else if j, dup := gates[g.Gate]; dup {
			add("%s: duplicate of gate %d", where, j)
		} else {
			gates[g.Gate] = i
		}
		if g.Status != Pass && g.Status != Fail && g.Status != Skip && g.Status != Error {
			add("%s: status %q, want PASS, FAIL, SKIP or ERROR", where, g.Status)
		}
		finite(where, "seconds", g.Seconds)
		for _, k := range sortedKeys(g.Metrics) {
			finite(where, "metric "+k, g.Metrics[k])
		}
	}

	keys := map[string]int{}
	for i := range d.Records {
		r := &d.Records[i]
		where := fmt.Sprintf("record %d (%s)", i, r.Key())
		var missing []string
		for _, f := range []struct{ name, v string }{{"suite", r.Suite}, {"kernel", r.Kernel}, {"variant", r.Variant}, {"shape", r.Shape}} {
			if f.v == "" {
				missing = append(missing, f.name)
			}
		}
		if len(missing) > 0 {
			add("%s: no %s", where, strings.Join(missing, ", "))
		}
		if r.Regime != Cold && r.Regime != Hot && r.Regime != Isolated {
			add("%s: regime %q, want %q, %q or %q", where, r.Regime, Cold, Hot, Isolated)
		}
		if r.M < 0 {
			add("%s: M is %d", where, r.M)
		}
		if r.Bytes < 0 || r.Flops < 0 {
			add("%s: negative bytes (%d) or flops (%d)", where, r.Bytes, r.Flops)
		}
		if j, dup := keys[r.Key()]; dup {
			add("%s: duplicate key, also record %d; each (suite, kernel, variant, shape, M, regime) is measured once per run", where, j)
		} else {
			keys[r.Key()] = i
		}
		samples := func(field string, xs []float64) {
			for k, x := range xs {
				if math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 {
					add("%s: %s[%d] is %v; a per-call time is positive and finite", where, field, k, x)
					return
				}
			}
		}
		samples("samples_us", r.SamplesUS)
		if c := r.Check; c != nil {
			switch {
			case c.Status != CheckPass && c.Status != CheckFail && c.Status != CheckNone:
				add("%s: check status %q is not %s, %s or %s", where, c.Status, CheckPass, CheckFail, CheckNone)
			case c.Status == CheckFail && len(r.SamplesUS) > 0:
				add("%s: a variant whose output check failed has samples; a failed variant is not timed", where)
			case c.Status == CheckFail && (r.Verdict != "" || r.Control != nil):
				add("%s: a variant whose output check failed has a verdict or control", where)
			case c.Status != CheckPass && c.Reason == "":
				add("%s: check status %s without a reason", where, c.Status)
			}
		}
		if len(r.SamplesUS) == 0 && !r.Failed() {
			add("%s: no samples; only a variant whose output check failed goes untimed", where)
		}
		for _, f := range []struct {
			name string
			v    float64
		}{{"median_us", r.MedianUS}, {"mean_us", r.MeanUS}, {"trimmed_mean_us", r.TrimmedMeanUS}, {"gbps", r.GBps}, {"tflops", r.TFlops}} {
			finite(where, f.name, f.v)
		}
		for _, k := range sortedKeys(r.Extra) {
			finite(where, "extra "+k, r.Extra[k])
		}
		if c := r.Control; c != nil {
			samples("control.a_samples_us", c.ASamplesUS)
			samples("control.b_samples_us", c.BSamplesUS)
			finite(where, "control.ratio", c.Ratio)
			finite(where, "control.spread_pct", c.SpreadPct)
		}
	}
	if len(probs) == 0 {
		return nil
	}
	if len(probs) > maxProblems {
		probs = append(probs[:maxProblems], "(more problems not listed)")
	}
	return &ValidationError{Problems: probs}
}

// ValidationError lists what is wrong with a Document.
type ValidationError struct {
	Problems []string
}

func (e *ValidationError) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0]
	}
	return fmt.Sprintf("%d problems:\n\t%s", len(e.Problems), strings.Join(e.Problems, "\n\t"))
}

// ErrInvalid is wrapped by every error about a document that breaks the
// invariants.
var ErrInvalid = errors.New("invalid results document")

func (e *ValidationError) Unwrap() error { return ErrInvalid }

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// Package gates holds the correctness gates: each gate is a named check that
// either passes, fails with the evidence, or is skipped with the reason it
// could not run. Gates register themselves in init functions (one file per
// subject: e4m3.go, identity.go, ...) and the CLI runs the registry.
//
// A gate body receives a *T, in the spirit of testing.T:
//   - t.Failf records a failure and keeps going, so one run reports every
//     bad case (name the kernel, variant, shape, M, seed, the count of bad
//     elements and the first few with got and want);
//   - t.Skipf stops the gate and reports SKIP with its reason, which must say
//     what is missing and how to get it;
//   - t.Metric records a figure that goes into the results JSON;
//   - t.Device returns the GPU or skips the gate with the reason none was
//     opened; t.Buffer hands out canary-guarded device buffers. The gate
//     poisons every output with t.Poison before each launch (t.Launch does
//     not); t.Launch checks every buffer's canaries and re-verifies the
//     uploaded inputs after the launch.
//
// Rules every gate keeps (docs/gates.md): poisoned outputs, every
// output cleared between variants, canaries, fresh seeded inputs with the
// seed recorded, deployed shapes, and every launch's status checked.
package gates

import (
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/progress"
	"github.com/parharness/parharness/internal/registry"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/results"
)

// Suite says which runs include a gate.
type Suite uint8

const (
	Quick Suite = 1 << iota // scripts/run.sh --quick, the CI gate
	Full                    // exhaustive sweeps; --full runs Quick|Full gates
)

// Status of one gate run: results.Pass, Fail or Skip (one vocabulary for
// the gates and the results document).
type Status = string

const (
	Pass Status = results.Pass
	Fail Status = results.Fail
	Skip Status = results.Skip
	// Error is a gate that could not run: no device under --require-device,
	// a missing or refused code object, a missing symbol. It is not a wrong
	// result (Fail), and the CLI exits 2 for it.
	Error Status = results.Error
)

// Gate is one registered check.
type Gate struct {
	Name   string // unique, lower-case, e.g. "e4m3-device-sweep"
	Family string // the kernel family whose kernels it checks ("" for harness and static gates)
	Proves string // one sentence: what a PASS establishes
	Suites Suite
	Device bool // needs a GPU; without one it reports SKIP
	// Headline names the metrics a table shows first: the figure a reader
	// looks for (the worst margin, the mismatch count), not the
	// alphabetically first one.
	Headline []string
	Run      func(t *T)
}

var gateRegistry = registry.New[Gate]("gate")

// Register adds a gate; it panics on a duplicate name (a programming error).
func Register(g Gate) {
	if g.Run == nil || g.Proves == "" || g.Suites == 0 {
		panic("gates: gate " + g.Name + " needs Run, Proves and Suites")
	}
	if g.Suites&Quick != 0 && g.Suites&Full == 0 {
		panic("gates: gate " + g.Name + " is in the quick suite but not the full one (--full is the quick gates plus the sweeps)")
	}
	gateRegistry.Add(g.Name, g)
}

// All returns the registered gates in name order.
func All() []Gate { return gateRegistry.All() }

// Select returns the gates of a suite whose names match only (nil: all).
func Select(suite Suite, only *regexp.Regexp) []Gate {
	var out []Gate
	for _, g := range All() {
		if g.Suites&suite == 0 {
			continue
		}
		if only != nil && !only.MatchString(g.Name) {
			continue
		}
		out = append(out, g)
	}
	return out
}

// Env is what every gate of one run shares.
type Env struct {
	Dev        gpu.Device // nil when no device could be opened
	DevErr     error      // why Dev is nil
	Kernels    *kernels.Loader
	BuildDir   string // where `make kernels` put the code objects
	Seed       uint64 // base seed; each gate derives its own (SeedFor)
	Full       bool   // running the full suite
	Checkpoint string // --checkpoint DIR, "" for synthetic weights
	Log        io.Writer
	// FailFast stops a gate at its first failure (mutation runs: a killed
	// mutant needs one failure, not all of them).
	FailFast bool
	// Progress, when set, starts the progress meter of a long gate's
	// loop (T.Progress): label is the gate's name, unit what it counts.
	// The CLI's prints to stderr; nil reports nothing.
	Progress func(label, unit string, total int) *progress.Meter
}

// Reporter is what a check reports to: a gate's *T, or a bench's
// Findings when it checks the outputs it times. Family check functions take
// a Reporter so one check serves both.
type Reporter interface {
	Failf(format string, args ...any)
	Logf(format string, args ...any)
	Metric(name string, v float64)
}

// Findings collects a check's failures outside a gate (metrics and notes
// are dropped): what a bench records when a variant's output is wrong.
type Findings struct {
	Failures []string
}

// Failf records a failure.
func (f *Findings) Failf(format string, args ...any) {
	if len(f.Failures) < maxFailures {
		f.Failures = append(f.Failures, fmt.Sprintf(format, args...))
	} else if len(f.Failures) == maxFailures {
		f.Failures = append(f.Failures, "(further failures not listed)")
	}
}

// Logf drops a note.
func (f *Findings) Logf(string, ...any) {}

// Metric drops a figure.
func (f *Findings) Metric(string, float64) {}

// Err is nil when nothing failed, else the failures as one error.
func (f *Findings) Err() error {
	if len(f.Failures) == 0 {
		return nil
	}
	return errors.New(strings.Join(f.Failures, "; "))
}

// Result is one gate's outcome: the results document's gate record, filled
// in by RunGate and written as is.
type Result = results.GateRecord

// T is the handle a gate body works through.
type T struct {
	env   *Env
	gate  Gate
	res   *Result
	bufs  []*Buffer
	meter *progress.Meter
	// reread is the host slice CheckCanaries re-reads inputs into, kept
	// across launches.
	reread []byte
	smem   sharedPoison
	inputs inputCheck
}

type skipSignal struct{}
type errorSignal struct{}
type fatalSignal struct{}

// maxFailures bounds the failure lines kept per gate; the count is exact.
const maxFailures = 20

// Failf records a failure and continues.
func (t *T) Failf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if t.res.Status != Fail {
		t.res.Reason = msg
	}
	t.res.Status = Fail
	if len(t.res.Failures) < maxFailures {
		t.res.Failures = append(t.res.Failures, msg)
	} else if len(t.res.Failures) == maxFailures {
		t.res.Failures = append(t.res.Failures, "(further failures not listed)")
	}
	if t.env != nil && t.env.FailFast {
		panic(fatalSignal{})
	}
}

// Fatalf records a failure and stops the gate.
func (t *T) Fatalf(format string, args ...any) {
	t.Failf(format, args...)
	panic(fatalSignal{})
}

// Check fails the gate and stops it if err is non-nil; what names the step.
func (t *T) Check(err error, what string) {
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Skipf stops the gate with status SKIP (unless it already failed).
func (t *T) Skipf(format string, args ...any) {
	if t.res.Status != Fail {
		t.res.Status = Skip
		t.res.Reason = fmt.Sprintf(format, args...)
	}
	panic(skipSignal{})
}

// Unavailablef stops the gate with status ERROR (unless it already
// failed): what it needs to run is missing, and the message says what.
func (t *T) Unavailablef(format string, args ...any) {
	if t.res.Status != Fail {
		t.res.Status = Error
		t.res.Reason = fmt.Sprintf(format, args...)
	}
	panic(errorSignal{})
}

// Logf adds a note to the gate's result and the run log.
func (t *T) Logf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	t.res.Notes = append(t.res.Notes, msg)
	if t.env.Log != nil {
		fmt.Fprintf(t.env.Log, "  %s: %s\n", t.gate.Name, msg)
	}
}

// Case names a gate's case by what it is (results.Case): a per-case
// metric's key is Case.Key(metric), the same in every run.
type Case = results.Case

// NewCase returns a case of alternating label names and values.
func NewCase(kv ...any) Case { return results.NewCase(kv...) }

// Metric records a named figure in the gate's result. A per-case figure is
// named by its case (Case.Key), never by its seed: a key that fails
// results.CheckMetricKey (a seed in it, a label that does not read back)
// fails the gate, since two runs' results would share none of it.
// A value that is not finite (a NaN from an unwritten, poisoned output)
// cannot go into the results JSON, which must stay readable: it is logged
// instead, and the check that saw it fails the gate.
func (t *T) Metric(name string, v float64) {
	if err := results.CheckMetricKey(name); err != nil {
		t.Failf("gate bug: metric not recorded: %v", err)
		return
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		t.Logf("metric %s = %v: not finite, left out of the results", name, v)
		return
	}
	if t.res.Metrics == nil {
		t.res.Metrics = map[string]float64{}
	}
	t.res.Metrics[name] = v
}

// CaseSeed records the seed case c drew its inputs from (the results'
// CaseSeeds): a value, so the case's metric keys stay the same across runs.
func (t *T) CaseSeed(c Case, seed uint64) {
	if t.res.CaseSeeds == nil {
		t.res.CaseSeeds = map[string]uint64{}
	}
	t.res.CaseSeeds[c.String()] = seed
}

// Seed is this gate's seed: the run seed mixed with the gate name, so each
// gate draws fresh inputs and a single gate can be replayed with --seed.
func (t *T) Seed() uint64 { return t.res.Seed }

// Full reports whether the full suite is running.
func (t *T) Full() bool { return t.env.Full }

// Env returns the run environment.
func (t *T) Env() *Env { return t.env }

// Progress starts the gate's progress meter for a loop over total items
// of unit ("cases"): the gate calls Step as items finish, and the meter
// prints where the run prints progress (Env.Progress; nowhere when nil,
// which the returned nil meter handles). The meter ends with the gate.
func (t *T) Progress(unit string, total int) *progress.Meter {
	if t.env.Progress == nil {
		return nil
	}
	t.meter.Done()
	t.meter = t.env.Progress(t.gate.Name, unit, total)
	return t.meter
}

// Device returns the GPU or skips the gate saying why there is none.
func (t *T) Device() gpu.Device {
	if t.env.Dev == nil {
		reason := "no GPU device was opened"
		if t.env.DevErr != nil {
			reason = t.env.DevErr.Error()
		}
		t.Skipf("%s", reason)
	}
	return t.env.Dev
}

// SeedFor mixes a run seed with a gate name (splitmix64 over FNV-1a).
func SeedFor(run uint64, name string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	z := run ^ h
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// RunGate runs one gate and returns its result; panics other than the T
// signals become failures with their stack, so one broken gate cannot take
// the run down.
func RunGate(env *Env, g Gate) (res Result) {
	res = Result{Gate: g.Name, Status: Pass, Seed: SeedFor(env.Seed, g.Name)}
	t := &T{env: env, gate: g, res: &res}
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			switch r.(type) {
			case skipSignal, fatalSignal, errorSignal:
			default:
				t.Failf("panic: %v\n%s", r, firstLines(string(debug.Stack()), 12))
			}
		}
		t.release()
		t.closeInputCheck()
		t.meter.Done()
		res.Seconds = time.Since(start).Seconds()
	}()
	if g.Device {
		t.Device()
	}
	g.Run(t)
	return res
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

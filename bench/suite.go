package bench

import (
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/parharness/parharness/gpu"
	"github.com/parharness/parharness/internal/registry"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/regret"
	"github.com/parharness/parharness/results"
	"github.com/parharness/parharness/shapes"
)

// The default M ladders of the suites: the decode band and prefill.
var (
	DecodeMs  = []int{1, 2, 5, 8, 16, 40, 48, 64}
	PrefillMs = []int{512, 1024, 2048, 4096, 8192}
)

// Suite is a named sweep (`parharness bench2 NAME`). Run declares and
// measures its points through the Ctx; an invalid point is skipped with
// c.Skipf (a reason, never silently).
type Suite struct {
	Name   string
	Family string // the kernel family whose kernels it times ("" for none)
	Doc    string
	Run    func(c *Ctx) error
	Laws   []Law // selection laws scored against the per-cell argmin after the run
	// Isolated suites time their cold points in the isolated regime too,
	// by default (bench2 --regimes).
	Isolated bool
	// Variants lists every variant name the suite may run on some device,
	// the experimental ones (run only when named) included: what
	// --variants accepts, checked before any device work. An entry may be
	// a path.Match pattern ("blocks=*") for names that depend on the
	// device. The family's fake-device tests check that every record's
	// variant is listed.
	Variants func() []string
	// Axes says what the suite sweeps, for `help bench2 SUITE`.
	Axes string
	// PeerTargets are the goals the suite's fastest checked record of a
	// cell must reach against the vendor peer (results.BestPeerRows);
	// bench2 and report mark each cell and count the cells that meet each.
	PeerTargets []PeerTarget
}

// PeerTarget is one goal against the vendor peer.
type PeerTarget struct {
	Name    string                                         // what it asks, as the table's column head
	Applies func(M int) bool                               // the cells it covers (nil: every cell)
	Met     func(r results.PeerRow, copyGBps float64) bool // copyGBps: the run's copy ceiling
	// CopyShare is the fraction of the copy ceiling the goal asks for (0:
	// not a copy goal). A run that measured no ceiling cannot judge it: its
	// cells are shown unjudged, not as misses.
	CopyShare float64
}

// CopyShareTarget is the goal of at least share of the copy ceiling (the
// record's bytes over its time) in the cells applies covers.
func CopyShareTarget(name string, share float64, applies func(M int) bool) PeerTarget {
	return PeerTarget{Name: name, Applies: applies, CopyShare: share,
		Met: func(r results.PeerRow, c float64) bool { return r.KernelGBps >= share*c }}
}

// ErrUnknownVariant is wrapped by CheckVariants' error.
var ErrUnknownVariant = errors.New("unknown variant")

// VariantKnown reports whether name is one of the suite's variants.
func (s Suite) VariantKnown(name string) bool {
	if s.Variants == nil {
		return true
	}
	for _, p := range s.Variants() {
		if ok, _ := path.Match(p, name); ok || p == name {
			return true
		}
	}
	return false
}

// CheckVariants returns an error wrapping ErrUnknownVariant that lists the
// suite's variants if any name is not one of them.
func (s Suite) CheckVariants(names []string) error {
	for _, n := range names {
		if !s.VariantKnown(n) {
			return fmt.Errorf("%w %q for suite %s; its variants: %s", ErrUnknownVariant, n, s.Name, VariantList(s.Variants()))
		}
	}
	return nil
}

// VariantList joins variant names for a person, a run of names that
// differ only in a consecutive number written as one range: "S1..S64".
func VariantList(names []string) string {
	split := func(n string) (string, int, bool) {
		i := len(n)
		for i > 0 && n[i-1] >= '0' && n[i-1] <= '9' {
			i--
		}
		v, err := strconv.Atoi(n[i:])
		return n[:i], v, err == nil && i > 0 && (n[i:] == "0" || n[i] != '0')
	}
	var out []string
	for i := 0; i < len(names); {
		p, v, ok := split(names[i])
		j := i + 1
		for ok && j < len(names) {
			q, w, ok2 := split(names[j])
			if !ok2 || q != p || w != v+(j-i) {
				break
			}
			j++
		}
		if j-i >= 3 {
			out = append(out, names[i]+".."+names[j-1])
		} else {
			out = append(out, names[i:j]...)
		}
		i = j
	}
	return strings.Join(out, ", ")
}

// Law is a selection law over one variant axis of a suite's kernel: Pick
// names the variant the law would choose in a cell; Variants is the axis
// (only these variants compete for the per-cell argmin).
type Law struct {
	Name     string
	Kernel   string
	Variants []string
	Pick     regret.Law
	// PickFrom, when set, builds the pick from the run's records instead
	// (a law whose inputs the records carry, e.g. the S a launch used).
	PickFrom func(doc *results.Document, suite string) regret.Law
	// Over, when set, names the variants the argmin runs over in the
	// table's heading, in place of their list (for a law over many).
	Over string
	// OnlyPicked scores only the cells where the law's pick was timed (a
	// law over a launch mode a run need not time); the table's name then
	// counts the cells left out. Without it a pick not timed is an error.
	OnlyPicked bool
}

// OverText is what a law's regret heading says its argmin runs over.
func (l Law) OverText() string {
	if l.Over != "" {
		return l.Over
	}
	return VariantList(l.Variants)
}

// Regret scores a law against the records of a run.
func (l Law) Regret(doc *results.Document, suite string) (*regret.Table, error) {
	all := doc.CellTimes(suite, l.Kernel, Cold)
	times := map[regret.Cell]map[string]float64{}
	for c, vt := range all {
		for _, v := range l.Variants {
			if t, ok := vt[v]; ok {
				if times[c] == nil {
					times[c] = map[string]float64{}
				}
				times[c][v] = t
			}
		}
	}
	pick := l.Pick
	if l.PickFrom != nil {
		pick = l.PickFrom(doc, suite)
	}
	name, left := l.Name, 0
	if l.OnlyPicked {
		for c, vt := range times {
			if _, ok := vt[pick(c)]; !ok {
				delete(times, c)
				left++
			}
		}
		if len(times) == 0 && left > 0 {
			return nil, fmt.Errorf("regret: law %s: its pick was timed in none of the %d cells (time the variants it picks: %s)", l.Name, left, VariantList(l.Variants))
		}
		if left > 0 {
			name = fmt.Sprintf("%s (%d cells without the pick's launch left out)", l.Name, left)
		}
	}
	return regret.Compute(name, times, pick)
}

var suites = registry.New[Suite]("bench suite")

// RegisterSuite adds a suite; duplicate names panic (a programming error).
func RegisterSuite(s Suite) { suites.Add(s.Name, s) }

// FamilySuites returns the suites of a kernel family in name order.
func FamilySuites(family string) []Suite {
	var out []Suite
	for _, s := range Suites() {
		if s.Family == family {
			out = append(out, s)
		}
	}
	return out
}

// Suites returns the registry in name order.
func Suites() []Suite { return suites.All() }

// LookupSuite finds a suite by name.
func LookupSuite(name string) (Suite, bool) { return suites.Get(name) }

// Ctx is what a suite runs with.
type Ctx struct {
	Dev      gpu.Device
	Kernels  *kernels.Loader
	Engine   *Engine
	Ms       []int       // --m: M values to sweep (nil: the suite's default ladder)
	Shapes   *shapes.Set // --shapes: the per-rank linears the suites sweep
	Variants []string    // --variants: only these variants (nil: all)
	// MaxGrid (--max-grid), when positive, caps the grid of the kernels
	// that size it to the device (stream-K: one block a resident slot) at
	// that many blocks: a probe of how their time depends on the grid.
	MaxGrid int
	Log     io.Writer
	// Progress, when set, is told as each step of a loop starts: done of
	// total steps are finished and what runs now (a suite's points, the
	// copy ceiling's sizes). bench2 prints it on stderr (internal/progress).
	Progress func(done, total int, what string)

	Records []results.Record // read with RecordsSnapshot while a suite may still run
	Skipped []string
	allocs  []gpu.Ptr
	mu      sync.Mutex // guards Records against a signal handler's snapshot

	// Suite names the running suite (the points' keys start with it).
	Suite string
	// Shard, when set, picks this run's part of the sweep: Take gives the
	// i-th point the suite enumerates to shard i mod Count.
	Shard   *results.Shard
	Planned []string // every point the suite enumerated (results.PointKey), in order
	taken   map[string]bool
}

// AddRecords appends records measured outside Measure (a vendor peer's).
func (c *Ctx) AddRecords(rs ...results.Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Records = append(c.Records, rs...)
}

// RecordsSnapshot is a copy of the records so far, safe to take from
// another goroutine (a signal handler writing partial results).
func (c *Ctx) RecordsSnapshot() []results.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.Records)
}

// Take reports whether this run measures the point (shape, M): a suite
// calls it once per point it would measure, after its own skips and before
// building the point, and measures only when it returns true. Every point
// is recorded in Planned, so a merge can tell a missing one.
func (c *Ctx) Take(shape string, M int) bool {
	k := results.PointKey(c.Suite, shape, M)
	i := len(c.Planned)
	c.Planned = append(c.Planned, k)
	if c.Shard != nil && i%c.Shard.Count != c.Shard.Index {
		return false
	}
	if c.taken == nil {
		c.taken = map[string]bool{}
	}
	c.taken[k] = true
	return true
}

// Alloc allocates device memory that lives until the current point is measured.
func (c *Ctx) Alloc(n int64) (gpu.Ptr, error) {
	p, err := c.Dev.Malloc(int(n))
	if err != nil {
		return 0, err
	}
	c.allocs = append(c.allocs, p)
	return p, nil
}

// FreeAll frees every allocation made since the last point.
func (c *Ctx) FreeAll() {
	for _, p := range c.allocs {
		c.Dev.Free(p)
	}
	c.allocs = nil
}

// Skipf records a point that was not measured and why.
func (c *Ctx) Skipf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	c.Skipped = append(c.Skipped, msg)
	if c.Log != nil {
		fmt.Fprintf(c.Log, "skip: %s\n", msg)
	}
}

// Want reports whether a variant passes the --variants filter.
func (c *Ctx) Want(variant string) bool {
	return len(c.Variants) == 0 || slices.Contains(c.Variants, variant)
}

// Named reports whether --variants names variant explicitly (opt-in
// variants, such as experimental kernels, run only then).
func (c *Ctx) Named(variant string) bool { return slices.Contains(c.Variants, variant) }

// MsOr returns --m if given, else the suite's default ladder.
func (c *Ctx) MsOr(def []int) []int {
	if len(c.Ms) > 0 {
		return c.Ms
	}
	return def
}

// Measure runs a point (after filtering its variants), appends its records
// and frees the point's allocations.
func (c *Ctx) Measure(p Point) error {
	defer c.FreeAll()
	if c.Shard != nil && p.Suite == c.Suite && !c.taken[results.PointKey(c.Suite, p.Shape, p.M)] { // (ceilings are no sweep point)
		return fmt.Errorf("bench: suite %s measured %s M=%d without taking it (Ctx.Take): under --shard every point must be taken first", c.Suite, p.Shape, p.M)
	}
	var vs []Variant
	for i, v := range p.Variants {
		if i == 0 || c.Want(v.Name) { // the baseline always runs: verdicts need it
			vs = append(vs, v)
		}
	}
	p.Variants = vs
	recs, err := c.Engine.Measure(p)
	c.AddRecords(recs...) // under LaunchOnce, what launched before an error
	return err
}

// ErrNoExLaunch is LauncherEx's error (wrapped) when the device has no
// extended launch (HIP, or a CUDA driver without cuLaunchKernelEx): the
// one case a suite may skip a variant for; anything else is an error.
var ErrNoExLaunch = errors.New("the backend has no extended launch")

// Launcher returns an Enqueue for kernel with fixed geometry and per-copy
// arguments (args(copy) picks the buffer set of the cold rotation). The
// arguments are checked once, on copy 0's, against the kernel's declared
// parameters (every copy passes the same types).
func (c *Ctx) Launcher(kernel string, grid, block gpu.Dim3, shared int, args func(copy int) []any) (func(gpu.Stream, int) error, error) {
	return c.LauncherEx(kernel, grid, block, shared, gpu.LaunchOpts{}, args)
}

// LauncherEx is Launcher with launch options (clusters, programmatic
// dependent launch); zero options launch plainly.
func (c *Ctx) LauncherEx(kernel string, grid, block gpu.Dim3, shared int, opts gpu.LaunchOpts, args func(copy int) []any) (func(gpu.Stream, int) error, error) {
	ex, isEx := c.Dev.(gpu.ExLauncher)
	if opts != (gpu.LaunchOpts{}) && !isEx {
		return nil, fmt.Errorf("%s: the %s backend cannot launch with %v: %w", kernel, c.Dev.Info().Backend, opts, ErrNoExLaunch)
	}
	f, err := c.Kernels.Checked(kernel, args(0))
	if err != nil {
		return nil, err
	}
	if err := kernels.CheckLaunch(kernel, shared, opts); err != nil {
		return nil, err
	}
	if opts == (gpu.LaunchOpts{}) {
		return func(s gpu.Stream, copy int) error {
			return c.Dev.Launch(f, grid, block, shared, s, args(copy)...)
		}, nil
	}
	return func(s gpu.Stream, copy int) error {
		return ex.LaunchEx(f, grid, block, shared, s, opts, args(copy)...)
	}, nil
}

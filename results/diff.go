package results

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/parharness/parharness/internal/textutil"
	"github.com/parharness/parharness/stats"
)

// Verdicts of a diff row. Faster, Slower and Same come from stats.Compare.
const (
	VerdictFaster   = stats.Faster
	VerdictSlower   = stats.Slower
	VerdictSame     = stats.Same
	VerdictAdded    = "added"    // only in the new run
	VerdictRemoved  = "removed"  // only in the old run
	VerdictMismatch = "MISMATCH" // same row, different work or regime: not compared
	VerdictUnknown  = "?"        // too few samples to decide
	VerdictFailed   = "FAILED"   // the new run's output check failed: nothing to compare
)

// DiffOptions tunes Diff.
type DiffOptions struct {
	// OnlyChanged keeps only rows whose verdict is not "~" (and gate
	// status changes), for a short pull-request comment.
	OnlyChanged bool
	// MinNoisePct is the least noise a cross-run difference must exceed,
	// whatever the runs' own controls say: an identical-code control
	// measures noise within one run, not between two runs on a machine
	// whose clocks, temperature and neighbours changed (H200, 2026-11-29,
	// `parharness bench2 copy` twice back to back on identical code: rows
	// differed by up to 1.7% with in-run controls of 0.2-0.4%).
	MinNoisePct float64
	// MetricNoisePct is the least change of a gate metric's median
	// per-case ratio that can be a verdict (stats.CompareValues); 0 means
	// DefaultMetricNoisePct.
	MetricNoisePct float64
}

// DefaultMetricNoisePct is the noise floor of gate metrics. Their values
// come from seeded random inputs and move with the seed: between the two
// H200 quick runs of 2026-11-29 and 2026-12-01 (different seeds), the
// GEMM gate's per-case rel and floor ratios had a median of 0.999 and a
// 10th-90th percentile range of 0.99-1.02, rel_exact 0.91-1.07; 10% keeps
// that scatter out of the verdicts and still calls a kernel whose errors
// grew by a third.
const DefaultMetricNoisePct = 10

// DiffSide summarises one of the two documents.
type DiffSide struct {
	Tool, Commit, Date, Device string
	Partial                    bool
}

// GateChange is a gate whose status differs between the runs; "" is a
// gate absent from that run.
type GateChange struct {
	Gate     string
	Old, New string
	Reason   string // the new run's reason (or the old one's, for a removed gate)
	// SameDevice: both runs name the same device (or both none), so a gate
	// that passed there and now skips or cannot run lost something.
	SameDevice bool
}

// Regression reports whether the change is a gate that passed (or did not
// exist) and now fails, or that passed and now skips or could not run on
// the same device. On another device (the old run on a GPU, the new on a
// machine without one) a SKIP or ERROR says what that device lacks.
func (g GateChange) Regression() bool {
	return g.New == Fail && g.Old != Fail || g.Old == Pass && (g.New == Skip || g.New == Error) && g.SameDevice
}

// DiffRow is one record compared across the runs.
type DiffRow struct {
	Suite, Kernel, Shape string
	M                    int
	Variant, Regime      string

	Old, New     *Record // nil for an added or removed row
	OldUS, NewUS float64 // trimmed means
	Ratio        float64 // NewUS / OldUS; 0 when not compared
	PValue       float64 // Mann-Whitney U; 1 when not computed
	NoisePct     float64 // the noise the difference had to exceed
	Verdict      string  // Verdict*
	Note         string  // why, for ? and MISMATCH; flags of either record
}

// Roof reports whether the row times a roof (FlagRoof on either side): a
// reference, not code under review, so it stays out of the geomean and of
// SlowerThan.
func (r *DiffRow) Roof() bool {
	return (r.Old != nil && r.Old.HasFlag(FlagRoof)) || (r.New != nil && r.New.HasFlag(FlagRoof))
}

// Key is the row's record key (for a regime mismatch, the new run's).
func (r *DiffRow) Key() string {
	return recordKey(r.Suite, r.Kernel, r.Shape, r.M, r.Variant, r.Regime)
}

// DiffReport is the comparison of two runs.
type DiffReport struct {
	Old, New    DiffSide
	Warnings    []string     // devices differ, partial runs, ...
	GateChanges []GateChange // regressions (-> FAIL) first, then by name
	Metrics     []MetricRow  // gate metrics by gate and metric name
	MetricNoise float64      // the noise floor the metric verdicts used, in percent
	Rows        []DiffRow    // in record order

	// Width is the columns WriteText's tables may use (0: as wide as
	// their cells); the CLI sets it from the terminal.
	Width int

	Faster, Slower, Same, Unknown int
	Added, Removed, Mismatched    int
	Geomean                       float64 // of Ratio over compared rows but roofs; 0 when none
}

const mismatchWhy = "measure different work (bytes, flops) or cache regimes under the same name in the two runs and were not compared"

// CheckFailures returns an error listing the new run's records whose
// output check failed, or nil: a wrong kernel is a regression whatever its
// time.
func (d *DiffReport) CheckFailures() error {
	return d.rowsError(VerdictFailed, "of the new run failed their output check")
}

// Mismatches returns an error listing the rows that could not be compared
// because the two runs measured different things under the same name, or
// nil. The CLI should exit non-zero on it: a silent mismatch is how a
// "2x faster" that is really a smaller problem gets merged.
func (d *DiffReport) Mismatches() error { return d.rowsError(VerdictMismatch, mismatchWhy) }

// rowsError lists the rows of one verdict with their notes, or is nil.
func (d *DiffReport) rowsError(verdict, what string) error {
	var lines []string
	for _, r := range d.Rows {
		if r.Verdict == verdict {
			lines = append(lines, r.Key()+": "+r.Note)
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return fmt.Errorf("results: diff: %d rows %s:\n\t%s", len(lines), what, strings.Join(lines, "\n\t"))
}

func side(d *Document) DiffSide {
	s := DiffSide{Tool: d.Tool, Commit: d.Commit, Date: d.Date, Partial: d.Partial}
	if d.Device != nil {
		s.Device = strings.TrimSpace(d.Device.Name + " " + d.Device.Arch)
	}
	return s
}

// isolatedScrub says which scrub a run's isolated records followed: its
// scrub check's description, or, for a run with isolated records and no
// scrub check (written before the check existed), the copy scrub of that
// time; "" for a run without isolated records.
func isolatedScrub(d *Document) string {
	for _, r := range d.Records {
		if r.Regime != Isolated {
			continue
		}
		if d.ScrubCheck != nil {
			return fmt.Sprintf("%q", d.ScrubCheck.Scrub)
		}
		return "unrecorded (copy_v4 over twice the last-level cache each way, before the scrub check)"
	}
	return ""
}

// Diff compares the records and gates of two runs. Records are matched by
// Key. A matched pair is compared with stats.Compare on the raw samples:
// the noise threshold is the larger of the two records' control spreads
// when either has a control, else the larger sample spread. A pair that
// counts different bytes or flops, or rows that differ only in regime,
// are MISMATCH rows (see Mismatches). Diff fails only on an invalid
// document (Validate).
func Diff(old, new *Document, opts DiffOptions) (*DiffReport, error) {
	if old == nil || new == nil {
		return nil, errors.New("results: diff: nil document")
	}
	if err := old.Validate(); err != nil {
		return nil, fmt.Errorf("results: diff: old run: %w", err)
	}
	if err := new.Validate(); err != nil {
		return nil, fmt.Errorf("results: diff: new run: %w", err)
	}
	rep := &DiffReport{Old: side(old), New: side(new)}
	if rep.Old.Device != rep.New.Device {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("devices differ: old %q, new %q; ratios compare devices, not code", rep.Old.Device, rep.New.Device))
	}
	for _, s := range []struct {
		name string
		d    *Document
	}{{"old", old}, {"new", new}} {
		if s.d.Partial {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("the %s run is partial (%s); its missing rows show as added or removed", s.name, s.d.PartialReason))
		}
	}

	if so, sn := isolatedScrub(old), isolatedScrub(new); so != "" && sn != "" && so != sn {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the isolated regime's scrub differs: old %s, new %s; isolated rows compare scrubs, not code", so, sn))
	}
	if so, sn := suitesOf(old), suitesOf(new); so != sn {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("suites differ: old %s, new %s; rows of one have no twin in the other", so, sn))
	}
	rep.GateChanges = diffGates(old.Gates, new.Gates, rep.Old.Device == rep.New.Device)
	rep.MetricNoise = opts.MetricNoisePct
	if rep.MetricNoise <= 0 {
		rep.MetricNoise = DefaultMetricNoisePct
	}
	metrics, err := diffMetrics(old.Gates, new.Gates, rep.MetricNoise)
	if err != nil {
		return nil, err
	}
	rep.Rows = diffRecords(old.Records, new.Records, opts.MinNoisePct)

	logSum, n := 0.0, 0
	kept := rep.Rows[:0]
	for _, r := range rep.Rows {
		switch r.Verdict {
		case VerdictFaster:
			rep.Faster++
		case VerdictSlower:
			rep.Slower++
		case VerdictSame:
			rep.Same++
		case VerdictUnknown:
			rep.Unknown++
		case VerdictAdded:
			rep.Added++
		case VerdictRemoved:
			rep.Removed++
		case VerdictMismatch:
			rep.Mismatched++
		}
		if r.Ratio > 0 && r.Verdict != VerdictMismatch && !r.Roof() {
			logSum += math.Log(r.Ratio)
			n++
		}
		if !opts.OnlyChanged || r.Verdict != VerdictSame {
			kept = append(kept, r)
		}
	}
	rep.Rows = kept
	for _, m := range metrics {
		if !opts.OnlyChanged || m.Call != stats.Same {
			rep.Metrics = append(rep.Metrics, m)
		}
	}
	if n > 0 {
		rep.Geomean = math.Exp(logSum / float64(n))
	}
	return rep, nil
}

// suitesOf names what a document measured: its bench suites, "gates"
// when it has gate results, in order ("nothing" for neither).
func suitesOf(d *Document) string {
	var out []string
	if len(d.Gates) > 0 {
		out = append(out, "gates")
	}
	for _, r := range d.Records {
		if !slices.Contains(out, r.Suite) {
			out = append(out, r.Suite)
		}
	}
	if len(out) == 0 {
		return "nothing"
	}
	slices.Sort(out)
	return strings.Join(out, "+")
}

func diffGates(old, new []GateRecord, sameDevice bool) []GateChange {
	o := map[string]GateRecord{}
	for _, g := range old {
		o[g.Gate] = g
	}
	var out []GateChange
	seen := map[string]bool{}
	for _, g := range new {
		seen[g.Gate] = true
		og, ok := o[g.Gate]
		if ok && og.Status == g.Status {
			continue
		}
		c := GateChange{Gate: g.Gate, New: g.Status, Reason: g.Reason, SameDevice: sameDevice}
		if ok {
			c.Old = og.Status
		}
		out = append(out, c)
	}
	for _, g := range old {
		if !seen[g.Gate] {
			out = append(out, GateChange{Gate: g.Gate, Old: g.Status, Reason: g.Reason, SameDevice: sameDevice})
		}
	}
	slices.SortFunc(out, func(a, b GateChange) int {
		ra, rb := a.Regression(), b.Regression()
		if ra != rb {
			if ra {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Gate, b.Gate)
	})
	return out
}

func diffRecords(old, new []Record, minNoise float64) []DiffRow {
	oldBy := map[string]*Record{}
	for i := range old {
		oldBy[old[i].Key()] = &old[i]
	}
	newBy := map[string]*Record{}
	for i := range new {
		newBy[new[i].Key()] = &new[i]
	}

	// The identical-code control is measured once per rung and stored on
	// the rung's baseline record; every variant of the rung is judged
	// against it (the noise is a property of the rung, not of the record).
	oldCtl, newCtl := rungControls(old), rungControls(new)
	var rows []DiffRow
	var onlyOld, onlyNew []*Record
	for i := range new {
		n := &new[i]
		if o, ok := oldBy[n.Key()]; ok {
			rows = append(rows, compareRow(o, n, max(minNoise, oldCtl[o.rungKey()], newCtl[n.rungKey()])))
		} else {
			onlyNew = append(onlyNew, n)
		}
	}
	for i := range old {
		if _, ok := newBy[old[i].Key()]; !ok {
			onlyOld = append(onlyOld, &old[i])
		}
	}

	// Rows that differ only in regime: pair them as a mismatch when the
	// pairing is unambiguous (one on each side).
	countBase := func(rs []*Record) map[string]int {
		m := map[string]int{}
		for _, r := range rs {
			m[r.baseKey()]++
		}
		return m
	}
	ob, nb := countBase(onlyOld), countBase(onlyNew)
	pairedOld := map[string]*Record{}
	for _, o := range onlyOld {
		if ob[o.baseKey()] == 1 && nb[o.baseKey()] == 1 {
			pairedOld[o.baseKey()] = o
		}
	}
	for _, n := range onlyNew {
		if o := pairedOld[n.baseKey()]; o != nil {
			r := rowOf(n)
			r.Old, r.New = o, n
			r.OldUS, r.NewUS = o.TrimmedMeanUS, n.TrimmedMeanUS
			r.Verdict = VerdictMismatch
			r.Note = fmt.Sprintf("regime %s -> %s", o.Regime, n.Regime)
			rows = append(rows, r)
			continue
		}
		r := rowOf(n)
		r.New, r.NewUS, r.Verdict = n, n.TrimmedMeanUS, VerdictAdded
		if n.Failed() {
			r.Verdict, r.Note = VerdictFailed, "output check failed: "+n.Check.Reason
		}
		rows = append(rows, r)
	}
	for _, o := range onlyOld {
		if pairedOld[o.baseKey()] != nil {
			continue
		}
		r := rowOf(o)
		r.Old, r.OldUS, r.Verdict = o, o.TrimmedMeanUS, VerdictRemoved
		rows = append(rows, r)
	}
	slices.SortStableFunc(rows, func(a, b DiffRow) int {
		// A row orders as a record with its key fields.
		key := func(r DiffRow) Record {
			return Record{Suite: r.Suite, Kernel: r.Kernel, Shape: r.Shape, M: r.M, Variant: r.Variant, Regime: r.Regime}
		}
		return compareRecords(key(a), key(b))
	})
	return rows
}

func rowOf(r *Record) DiffRow {
	return DiffRow{Suite: r.Suite, Kernel: r.Kernel, Shape: r.Shape, M: r.M, Variant: r.Variant, Regime: r.Regime, PValue: 1}
}

// compareRow compares two records with the same key.
func compareRow(o, n *Record, minNoise float64) DiffRow {
	r := rowOf(n)
	r.Old, r.New = o, n
	r.OldUS, r.NewUS = o.TrimmedMeanUS, n.TrimmedMeanUS
	var notes []string
	for _, f := range o.Flags {
		notes = append(notes, "old "+f)
	}
	for _, f := range n.Flags {
		notes = append(notes, "new "+f)
	}
	if n.Failed() || o.Failed() {
		r.Verdict = VerdictFailed
		if !n.Failed() {
			r.Verdict = VerdictUnknown // the old run's output was wrong: its time means nothing
			notes = append(notes, "old output check failed")
		} else {
			notes = append(notes, "output check failed: "+n.Check.Reason)
		}
		r.Note = strings.Join(notes, "; ")
		return r
	}
	r.Verdict = compareFigures(&r, o, n, &notes, minNoise)
	r.Note = strings.Join(notes, "; ")
	return r
}

// rungControls maps each rung (suite, kernel, shape, M, regime) of recs to
// the spread of the identical-code control measured on it (0 where none).
func rungControls(recs []Record) map[string]float64 {
	m := map[string]float64{}
	for i := range recs {
		if c := recs[i].Control; c != nil {
			k := recs[i].rungKey()
			m[k] = max(m[k], c.SpreadPct)
		}
	}
	return m
}

// compareFigures fills the figures of r and returns its verdict; notes
// that explain the verdict go first.
func compareFigures(r *DiffRow, o, n *Record, notes *[]string, minNoise float64) string {
	if o.Bytes != n.Bytes || o.Flops != n.Flops {
		what := fmt.Sprintf("bytes %d -> %d", o.Bytes, n.Bytes)
		if o.Flops != n.Flops {
			what += fmt.Sprintf(", flops %d -> %d", o.Flops, n.Flops)
		}
		*notes = append([]string{what}, *notes...)
		return VerdictMismatch
	}
	// The noise threshold: the larger of the floor passed in (minNoise
	// raised to the rungs' control spreads) and the records' own sample
	// spreads. A floor must never lower the threshold below what the
	// samples themselves show.
	noise := minNoise
	sa, errA := stats.Spread(o.SamplesUS)
	sb, errB := stats.Spread(n.SamplesUS)
	if errA == nil && errB == nil {
		noise = max(noise, sa, sb)
	}
	v, err := stats.Compare(o.SamplesUS, n.SamplesUS, noise)
	if err != nil {
		// Too few (or no) raw samples: report the stored figures, no verdict.
		if o.TrimmedMeanUS > 0 && n.TrimmedMeanUS > 0 {
			r.Ratio = n.TrimmedMeanUS / o.TrimmedMeanUS
		}
		*notes = append([]string{fmt.Sprintf("%d+%d samples, need %d each", len(o.SamplesUS), len(n.SamplesUS), stats.MinSamples)}, *notes...)
		return VerdictUnknown
	}
	// The stored trimmed means may come from an older derivation; show the
	// figures the verdict was computed from.
	r.OldUS, _ = stats.TrimmedMean(o.SamplesUS)
	r.NewUS, _ = stats.TrimmedMean(n.SamplesUS)
	r.Ratio, r.PValue, r.NoisePct = v.Ratio, v.PValue, v.NoisePct
	return v.Call
}

// ---- rendering ----

func fmtUS(x float64) string {
	if x == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", x)
}

func fmtRatio(r *DiffRow) string {
	if r.Ratio == 0 || r.Verdict == VerdictMismatch {
		return "-"
	}
	return fmt.Sprintf("%.3f", r.Ratio)
}

func fmtP(r *DiffRow) string {
	if r.Ratio == 0 || r.Verdict == VerdictUnknown || r.Verdict == VerdictMismatch {
		return "-"
	}
	if r.PValue < 0.001 {
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", r.PValue)
}

func fmtNoise(r *DiffRow) string {
	if r.Ratio == 0 || r.Verdict == VerdictUnknown || r.Verdict == VerdictMismatch {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", r.NoisePct)
}

func fmtSide(s DiffSide) string {
	out := fmt.Sprintf("commit %s, %s, %s, %s", orDash(s.Commit), orDash(s.Tool), orDash(s.Date), orDash(s.Device))
	if s.Partial {
		out += " (partial)"
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func gateStatus(s string) string {
	if s == "" {
		return "(absent)"
	}
	return s
}

func (d *DiffReport) summary() string {
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(d.Slower, "slower")
	add(d.Faster, "faster")
	add(d.Same, "~")
	add(d.Unknown, "?")
	add(d.Added, "added")
	add(d.Removed, "removed")
	add(d.Mismatched, "MISMATCH")
	if len(parts) == 0 {
		parts = append(parts, "no bench rows")
	}
	s := strings.Join(parts, ", ")
	if d.Geomean > 0 {
		s += fmt.Sprintf("; geomean new/old %.3f", d.Geomean)
	}
	return s
}

var (
	diffHeader = []string{"suite/kernel", "shape", "M", "variant", "regime", "old µs", "new µs", "new/old", "p", "noise", "verdict", "note"}
	diffAlign  = []tw.Align{tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignLeft, tw.AlignLeft,
		tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignLeft, tw.AlignLeft}
)

func (r *DiffRow) cells() []string {
	return []string{r.Suite + "/" + r.Kernel, r.Shape, fmt.Sprint(r.M), r.Variant, r.Regime,
		fmtUS(r.OldUS), fmtUS(r.NewUS), fmtRatio(r), fmtP(r), fmtNoise(r), r.Verdict, r.Note}
}

// WriteText writes the report as plain text: both runs, warnings, gate
// status changes, mismatched rows, the table of rows and a summary.
func (d *DiffReport) WriteText(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "old: %s\nnew: %s\n", fmtSide(d.Old), fmtSide(d.New))
	for _, s := range d.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", s)
	}
	if len(d.GateChanges) > 0 {
		b.WriteString("\ngate status changes:\n")
		for _, g := range d.GateChanges {
			fmt.Fprintf(&b, "  %s: %s -> %s", g.Gate, gateStatus(g.Old), gateStatus(g.New))
			if g.Regression() {
				b.WriteString(" (regression)")
			}
			if g.Reason != "" {
				fmt.Fprintf(&b, ": %s", g.Reason)
			}
			b.WriteString("\n")
		}
	}
	if len(d.Metrics) > 0 {
		fmt.Fprintf(&b, "\ngate metrics (median per-case new/old; a verdict needs it beyond %.0f%% and p < %.2f, counts compared exactly):\n", d.MetricNoise, stats.Alpha)
		if err := renderRows(&b, metricHeader, metricAlign, d.Metrics, (*MetricRow).cells, d.Width); err != nil {
			return err
		}
	}
	if d.Mismatched > 0 {
		fmt.Fprintf(&b, "\nMISMATCH: %d rows %s:\n", d.Mismatched, mismatchWhy)
		for _, r := range d.Rows {
			if r.Verdict == VerdictMismatch {
				fmt.Fprintf(&b, "  %s: %s\n", r.Key(), r.Note)
			}
		}
	}
	b.WriteString("\n")
	if len(d.Rows) > 0 {
		if err := renderRows(&b, diffHeader, diffAlign, d.Rows, (*DiffRow).cells, d.Width); err != nil {
			return err
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%s\n", d.summary())
	b.WriteString("verdict: faster/slower only when |new/old-1| exceeds the noise (identical-code control spread, else sample spread) and Mann-Whitney p < 0.05\n")
	_, err := w.Write(textutil.TrimTrailingSpace(b.Bytes()))
	return err
}

var metricAlign = []tw.Align{tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignLeft, tw.AlignLeft}

func renderRows[R any](buf *bytes.Buffer, header []string, align []tw.Align, rows []R, cells func(*R) []string, width int) error {
	// The note (last column) wraps first; the key columns keep their width.
	tb := textutil.Table{Header: header, Align: align, Plain: true, Shrink: []int{len(header) - 1}}
	for i := range rows {
		c := cells(&rows[i])
		row := make([]any, len(c))
		for j, v := range c {
			row[j] = v
		}
		tb.Append(row...)
	}
	if err := tb.Render(buf, width); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

// mdEscape makes s safe inside a Markdown table cell.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// WriteMarkdown writes the report as Markdown for a pull request: gate
// status changes first, then mismatches, the table and the summary.
func (d *DiffReport) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("### parharness diff\n\n")
	fmt.Fprintf(&b, "- old: %s\n- new: %s\n", mdEscape(fmtSide(d.Old)), mdEscape(fmtSide(d.New)))
	for _, s := range d.Warnings {
		fmt.Fprintf(&b, "- **warning:** %s\n", mdEscape(s))
	}
	if len(d.GateChanges) > 0 {
		b.WriteString("\n**Gate status changes**\n\n")
		for _, g := range d.GateChanges {
			nw := gateStatus(g.New)
			if g.Regression() {
				nw = "**" + nw + "**"
			}
			fmt.Fprintf(&b, "- `%s`: %s → %s", g.Gate, gateStatus(g.Old), nw)
			if g.Reason != "" {
				fmt.Fprintf(&b, ": %s", mdEscape(g.Reason))
			}
			b.WriteString("\n")
		}
	}
	if len(d.Metrics) > 0 {
		fmt.Fprintf(&b, "\n**Gate metrics** (median per-case new/old; a verdict needs it beyond %.0f%% and p < %.2f, counts compared exactly)\n\n", d.MetricNoise, stats.Alpha)
		writeMarkdownTable(&b, metricHeader, metricAlign, len(d.Metrics), func(i int) ([]string, bool) {
			m := &d.Metrics[i]
			return m.cells(), m.Call != stats.Same
		}, 7)
	}
	if d.Mismatched > 0 {
		fmt.Fprintf(&b, "\n**MISMATCH: %d rows %s**\n\n", d.Mismatched, mismatchWhy)
		for _, r := range d.Rows {
			if r.Verdict == VerdictMismatch {
				fmt.Fprintf(&b, "- `%s`: %s\n", r.Key(), mdEscape(r.Note))
			}
		}
	}
	if len(d.Rows) > 0 {
		b.WriteString("\n")
		writeMarkdownTable(&b, diffHeader, diffAlign, len(d.Rows), func(i int) ([]string, bool) {
			r := &d.Rows[i]
			switch r.Verdict {
			case VerdictSlower, VerdictFaster, VerdictMismatch:
				return r.cells(), true
			}
			return r.cells(), false
		}, 10)
	}
	fmt.Fprintf(&b, "\n%s\n\n", d.summary())
	b.WriteString("<sub>faster/slower only when |new/old−1| exceeds the noise (identical-code control spread, else sample spread) and Mann-Whitney p < 0.05; otherwise ~.</sub>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeMarkdownTable writes a Markdown table of n rows; row(i) returns a
// row's cells and whether its cell at column bold is set in bold.
func writeMarkdownTable(b *strings.Builder, header []string, align []tw.Align, n int, row func(int) ([]string, bool), bold int) {
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for _, a := range align {
		if a == tw.AlignRight {
			b.WriteString("--:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for i := 0; i < n; i++ {
		c, strong := row(i)
		for j := range c {
			c[j] = mdEscape(c[j])
		}
		if strong {
			c[bold] = "**" + c[bold] + "**"
		}
		b.WriteString("| " + strings.Join(c, " | ") + " |\n")
	}
}

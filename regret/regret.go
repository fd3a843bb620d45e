// Package regret scores a selection law against measurement.
//
// A selection law is the rule a kernel uses to pick one of its variants for
// a problem, such as a split-K count, waves per row or a band threshold,
// written as a function of the cell (shape and M). A sweep measures every
// variant in every cell; the best variant of a cell is the measured argmin.
// The law's regret in a cell is how much slower its pick ran than that
// best: t(law)/t(best) - 1.
//
// Two totals answer two questions (docs/bench.md):
//   - time-weighted regret, Σt(law)/Σt(best) - 1: how much time the law
//     costs over the sweep as a whole; long cells weigh more;
//   - mean per-cell regret: how often and how badly the law misses,
//     each cell counting the same, so that a bad pick in a short cell
//     is not hidden by long ones.
//
// The worst cell is named, since that is where a law gets fixed.
//
// Times may be in any unit, the same for every cell; the tables label
// them µs, the unit of the results document.
package regret

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/parharness/parharness/internal/textutil"
)

// Cell is one point of a sweep.
type Cell struct {
	Shape string
	M     int
}

func (c Cell) String() string { return fmt.Sprintf("%s M=%d", c.Shape, c.M) }

// Law picks a variant for a cell.
type Law func(Cell) string

// Row is one cell of a Table.
type Row struct {
	Cell
	Best   string  // measured argmin (the law's pick when it ties the argmin)
	BestUS float64 // its time
	Pick   string  // the law's variant
	PickUS float64 // its time
	Regret float64 // PickUS/BestUS - 1; 0 when the law picked the best
}

// Table is a law scored over a sweep.
type Table struct {
	Law      string  // the law's name, for the heading
	Rows     []Row   // sorted by shape, then M
	Weighted float64 // Σ PickUS / Σ BestUS - 1
	Mean     float64 // mean of Row.Regret
	Worst    int     // index in Rows of the largest regret (the first one on a tie)
	Hits     int     // cells where the law's pick ran as fast as the best
	// Width is the columns WriteText's table may use (0: as wide as its
	// cells).
	Width int
}

// Compute scores law (named name) against the measured times:
// times[cell][variant] is the time of variant in cell. Every cell must have
// at least one positive finite time, and the law must pick a variant that
// was measured in the cell; otherwise Compute fails, naming the cell.
// Ties for the argmin go to the lexically first variant, or to the law's
// pick when it is among them, so that a tie is never counted as regret.
func Compute(name string, times map[Cell]map[string]float64, law Law) (*Table, error) {
	if len(times) == 0 {
		return nil, fmt.Errorf("regret: law %s: no cells measured", name)
	}
	if law == nil {
		panic("regret: Compute with a nil law")
	}
	cells := make([]Cell, 0, len(times))
	for c := range times {
		cells = append(cells, c)
	}
	slices.SortFunc(cells, func(a, b Cell) int {
		return cmp.Or(cmp.Compare(a.Shape, b.Shape), cmp.Compare(a.M, b.M))
	})

	t := &Table{Law: name, Rows: make([]Row, 0, len(cells))}
	var sumPick, sumBest float64
	for _, c := range cells {
		vt := times[c]
		variants := make([]string, 0, len(vt))
		for v, x := range vt {
			if math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 {
				return nil, fmt.Errorf("regret: law %s: cell %s: variant %s has time %v; times must be positive and finite", name, c, v, x)
			}
			variants = append(variants, v)
		}
		if len(variants) == 0 {
			return nil, fmt.Errorf("regret: law %s: cell %s has no measured variants", name, c)
		}
		slices.Sort(variants)
		pick := law(c)
		pt, ok := vt[pick]
		if !ok {
			return nil, fmt.Errorf("regret: law %s picks %q in cell %s, which was not measured there (measured: %s); measure it or fix the law",
				name, pick, c, strings.Join(variants, ", "))
		}
		best := variants[0]
		for _, v := range variants[1:] {
			if vt[v] < vt[best] {
				best = v
			}
		}
		if pt == vt[best] {
			best = pick
		}
		r := Row{Cell: c, Best: best, BestUS: vt[best], Pick: pick, PickUS: pt, Regret: pt/vt[best] - 1}
		if r.Regret == 0 {
			t.Hits++
		}
		if len(t.Rows) > 0 && r.Regret > t.Rows[t.Worst].Regret {
			t.Worst = len(t.Rows)
		}
		t.Rows = append(t.Rows, r)
		t.Mean += r.Regret
		sumPick += pt
		sumBest += vt[best]
	}
	t.Mean /= float64(len(t.Rows))
	t.Weighted = sumPick/sumBest - 1
	return t, nil
}

// WorstRow returns the row of the largest regret.
func (t *Table) WorstRow() Row { return t.Rows[t.Worst] }

func pct(x float64) string { return fmt.Sprintf("%+.1f%%", 100*x) }

func us(x float64) string { return fmt.Sprintf("%.2f", x) }

func (t *Table) cells(r Row) []string {
	reg := pct(r.Regret)
	if r.Regret == 0 {
		reg = "0 (best)"
	}
	return []string{r.Shape, fmt.Sprint(r.M), r.Best, us(r.BestUS), r.Pick, us(r.PickUS), reg}
}

var (
	header = []string{"shape", "M", "best", "best µs", "law pick", "pick µs", "regret"}
	align  = []tw.Align{tw.AlignLeft, tw.AlignRight, tw.AlignLeft, tw.AlignRight, tw.AlignLeft, tw.AlignRight, tw.AlignRight}
)

// summary lines, shared by both renderings.
func (t *Table) summary() []string {
	w := t.WorstRow()
	worst := fmt.Sprintf("worst cell: %s, law picks %s (%.2f µs), best is %s (%.2f µs): %s",
		w.Cell, w.Pick, w.PickUS, w.Best, w.BestUS, pct(w.Regret))
	if w.Regret == 0 {
		worst = "worst cell: none, the law picks the best variant in every cell"
	}
	return []string{
		fmt.Sprintf("time-weighted regret Σt(law)/Σt(best)-1: %s", pct(t.Weighted)),
		fmt.Sprintf("mean per-cell regret: %s", pct(t.Mean)),
		fmt.Sprintf("law picks the best in %d of %d cells", t.Hits, len(t.Rows)),
		worst,
	}
}

// WriteText writes the table as aligned text followed by the totals.
func (t *Table) WriteText(w io.Writer) error {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "regret of law %s\n\n", t.Law)
	tb := textutil.Table{Header: header, Align: align, Plain: true}
	for _, r := range t.Rows {
		c := t.cells(r)
		row := make([]any, len(c))
		for i, v := range c {
			row[i] = v
		}
		tb.Append(row...)
	}
	if err := tb.Render(&buf, t.Width); err != nil {
		return fmt.Errorf("regret: %w", err)
	}
	buf.WriteString("\n")
	for _, s := range t.summary() {
		buf.WriteString(s + "\n")
	}
	_, err := w.Write(textutil.TrimTrailingSpace(buf.Bytes()))
	return err
}

package results

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plot writes one SVG per (suite, kernel) of doc into dir and returns the
// paths written, in record order. Each file has one row per shape and two
// panels per row: the trimmed-mean time (µs) against M and the effective
// GB/s against M, one line per variant (per variant and regime when the
// kernel was measured in both), with the run's copy ceiling as a dashed
// horizontal line on the GB/s panel. M is on a log axis when every M is
// positive. Records without a trimmed mean are left out.
func Plot(doc *Document, dir string) ([]string, error) {
	if doc == nil {
		return nil, errors.New("results: plot: nil document")
	}
	if err := doc.Validate(); err != nil {
		return nil, fmt.Errorf("results: plot: %w", err)
	}
	d := *doc
	d.Records = slices.Clone(doc.Records)
	d.Sort()
	ceiling := 0.0
	if c, ok := d.Ceiling(CeilingCopyGBps); ok {
		ceiling = c.Value
	}

	type kernelKey struct{ suite, kernel string }
	var order []kernelKey
	groups := map[kernelKey][]Record{}
	for _, r := range d.Records {
		if r.TrimmedMeanUS <= 0 {
			continue
		}
		k := kernelKey{r.Suite, r.Kernel}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("results: plot: %w", err)
	}
	var paths []string
	for _, k := range order {
		title := k.suite + "/" + k.kernel
		svg, err := plotKernel(title, groups[k], ceiling, newSVG)
		if err != nil {
			return paths, fmt.Errorf("results: plot %s: %w", title, err)
		}
		path := filepath.Join(dir, fileName(k.suite)+"_"+fileName(k.kernel)+".svg")
		if err := writeAtomic(path, svg); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

func fileName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return '_'
	}, s)
}

func newSVG(w, h vg.Length) vg.CanvasWriterTo { return vgsvg.New(w, h) }

// plotKernel draws one kernel's records on a canvas from newCanvas (SVG for
// Plot; tests may ask for PNG to look at).
func plotKernel(title string, recs []Record, ceiling float64, newCanvas func(w, h vg.Length) vg.CanvasWriterTo) ([]byte, error) {
	var shapes []string
	regimes := map[string]bool{}
	logX := true
	for _, r := range recs {
		if !slices.Contains(shapes, r.Shape) {
			shapes = append(shapes, r.Shape)
		}
		regimes[r.Regime] = true
		if r.M <= 0 {
			logX = false
		}
	}
	// One color per series name across the whole file.
	var names []string
	series := func(r Record) string {
		if len(regimes) > 1 {
			return r.Variant + " (" + r.Regime + ")"
		}
		return r.Variant
	}
	for _, r := range recs {
		if n := series(r); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)

	rows := make([][]*plot.Plot, len(shapes))
	for i, shape := range shapes {
		byName := map[string][]Record{}
		for _, r := range recs {
			if r.Shape == shape {
				byName[series(r)] = append(byName[series(r)], r)
			}
		}
		timeP, bwP := plot.New(), plot.New()
		timeP.Title.Text = title + "  " + shape + ": time"
		timeP.Y.Label.Text = "µs (trimmed mean)"
		bwP.Title.Text = title + "  " + shape + ": bandwidth"
		bwP.Y.Label.Text = "GB/s"
		minM, maxM := 0.0, 0.0
		for ci, name := range names {
			rs := byName[name]
			if len(rs) == 0 {
				continue
			}
			slices.SortFunc(rs, func(a, b Record) int { return cmp.Compare(a.M, b.M) })
			tp := make(plotter.XYs, len(rs))
			bp := make(plotter.XYs, len(rs))
			for j, r := range rs {
				tp[j] = plotter.XY{X: float64(r.M), Y: r.TrimmedMeanUS}
				bp[j] = plotter.XY{X: float64(r.M), Y: r.GBps}
				if minM == 0 && maxM == 0 || float64(r.M) < minM {
					minM = float64(r.M)
				}
				maxM = max(maxM, float64(r.M))
			}
			for _, p := range []struct {
				plt *plot.Plot
				xys plotter.XYs
			}{{timeP, tp}, {bwP, bp}} {
				l, s, err := plotter.NewLinePoints(p.xys)
				if err != nil {
					return nil, err
				}
				l.Color, s.Color = plotutil.Color(ci), plotutil.Color(ci)
				s.Shape = plotutil.Shape(ci)
				p.plt.Add(l, s)
				p.plt.Legend.Add(name, l, s)
			}
		}
		if ceiling > 0 {
			l, err := plotter.NewLine(plotter.XYs{{X: minM, Y: ceiling}, {X: maxM, Y: ceiling}})
			if err != nil {
				return nil, err
			}
			l.Color = color.Gray{Y: 0x60}
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			bwP.Add(l)
			bwP.Legend.Add(fmt.Sprintf("copy ceiling %.0f GB/s", ceiling), l)
			bwP.Y.Max = max(bwP.Y.Max, ceiling*1.05)
		}
		for _, p := range []*plot.Plot{timeP, bwP} {
			p.X.Label.Text = "M"
			p.Y.Min = 0
			// Headroom above the data for the legend in the top right.
			p.Y.Max *= 1 + 0.07*float64(len(byName)+2)
			p.Legend.Top = true
			p.Add(plotter.NewGrid())
			if logX && maxM > minM {
				p.X.Scale = plot.LogScale{}
				p.X.Tick.Marker = pow2Ticks{}
				p.X.Min, p.X.Max = minM/1.25, maxM*1.25
			}
		}
		rows[i] = []*plot.Plot{timeP, bwP}
	}

	w, h := 2*14*vg.Centimeter, vg.Length(len(shapes))*10*vg.Centimeter
	c := newCanvas(w, h)
	dc := draw.New(c)
	t := draw.Tiles{Rows: len(shapes), Cols: 2, PadX: vg.Centimeter, PadY: vg.Centimeter,
		PadTop: vg.Millimeter * 3, PadBottom: vg.Millimeter * 3, PadLeft: vg.Millimeter * 3, PadRight: vg.Millimeter * 3}
	canvases := plot.Align(rows, t, dc)
	for i := range rows {
		for j := range rows[i] {
			rows[i][j].Draw(canvases[i][j])
		}
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// pow2Ticks marks a log M axis at powers of two, the spacing of the M
// ladders, with minor ticks at the odd multiples in between.
type pow2Ticks struct{}

func (pow2Ticks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for v := 1.0; v <= hi; v *= 2 {
		if v >= lo {
			ts = append(ts, plot.Tick{Value: v, Label: fmt.Sprint(v)})
		}
		if m := v * 1.5; v >= 2 && m >= lo && m <= hi {
			ts = append(ts, plot.Tick{Value: m})
		}
	}
	return ts
}

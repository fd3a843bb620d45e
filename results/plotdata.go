package results

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// A Figure is what one plot file shows: one suite's records, one panel
// per shape, every kernel of the suite (the vendor peer included) on the
// same axes. Figures holds the data only; renderFigure draws it, so tests
// compare the series, not the pixels.
//
// The axes follow what the suite sweeps and what bounds it:
//   - x: M on a log2 axis for the GEMM and producer suites, the buffer
//     size in bytes (log2) for copy, the blocks launched for launch;
//   - y: GB/s for a memory-bound suite, against the run's copy ceiling;
//     TF/s for a compute-bound one, against the fp8 (or else bf16) matrix
//     peak; µs for launch, which moves no data. A suite is compute-bound
//     when the median arithmetic intensity of its kernels' records
//     (flops per byte) is above the ridge point, peak / copy ceiling.
//
// The y axis is scaled to the data: the ceiling is drawn (and the axis
// stretched to it) only when it is within CeilingReach of the highest
// point; otherwise the panel says it is above the scale.
type Figure struct {
	Suite  string
	Title  string
	XLabel string
	XKind  string // "M", "bytes" or "blocks": how ticks are labelled
	YLabel string
	// Ceiling is the roofline figure the y values are judged against
	// (nil: none).
	Ceiling *Ceiling
	// PickLabel names the selection law whose picks are marked ("" none).
	PickLabel string
	Panels    []Panel
	// Names are the series names in legend order (the same colour and
	// marker in every panel).
	Names []string
}

// Panel is one shape's series.
type Panel struct {
	Shape  string
	Series []Series
	// Picks are the points of the law's pick at each x (on the picked
	// variant's series).
	Picks []Point
	// YMax is the top of the y axis; CeilingOnScale says whether the
	// ceiling is drawn (it is at most YMax).
	YMax           float64
	CeilingOnScale bool
}

// Series is one variant's points in a panel, by x.
type Series struct {
	Name   string
	Peer   bool // the vendor library's GEMM (cuBLASLt, hipBLASLt)
	Points []Point
}

// Point is one record's position.
type Point struct{ X, Y float64 }

// CeilingReach is how far above the highest point a ceiling may be and
// still set the top of the y axis: beyond it, the data would be squeezed
// into the bottom of the panel (the producer kernels at a few percent of
// the copy ceiling sat on the x axis).
const CeilingReach = 1.5

// PlotOptions tunes Figures.
type PlotOptions struct {
	// Pick, when set, names the variant a suite's selection law picks for
	// kernel at (shape, M), and the law's name; "" where it has none.
	Pick func(suite, kernel, shape string, M int) (variant, law string)
}

// peerVariants are the variant names of vendor-library rows.
var peerVariants = []string{"cublaslt", "hipblaslt"}

// Figures returns one figure per suite of doc, in suite order. Records
// without a trimmed mean (failed checks) are left out.
func Figures(doc *Document, opts PlotOptions) []Figure {
	d := *doc
	d.Records = slices.Clone(doc.Records)
	d.Sort()
	var suites []string
	bySuite := map[string][]Record{}
	for _, r := range d.Records {
		if r.TrimmedMeanUS <= 0 {
			continue
		}
		if bySuite[r.Suite] == nil {
			suites = append(suites, r.Suite)
		}
		bySuite[r.Suite] = append(bySuite[r.Suite], r)
	}
	var out []Figure
	for _, s := range suites {
		out = append(out, suiteFigure(&d, s, bySuite[s], opts))
	}
	return out
}

func suiteFigure(doc *Document, suite string, recs []Record, opts PlotOptions) Figure {
	f := Figure{Suite: suite, XLabel: "M (rows, log2)", XKind: "M"}
	x := func(r Record) float64 { return float64(r.M) }
	y := func(r Record) float64 { return r.GBps }
	switch {
	case suite == "copy":
		f.XLabel, f.XKind = "buffer size (bytes, log2)", "bytes"
		x = func(r Record) float64 { return float64(copyBytes(r)) }
	case suite == "launch" || allZero(recs, func(r Record) float64 { return float64(r.Bytes) }):
		f.XLabel, f.XKind = "blocks", "blocks"
		x = func(r Record) float64 { return float64(blocksOf(r)) }
		y = func(r Record) float64 { return r.TrimmedMeanUS }
		f.YLabel = "µs per call (trimmed mean)"
	}
	if f.YLabel == "" {
		f.YLabel = "GB/s (bytes read and written / time)"
		if c, ok := doc.Ceiling(CeilingCopyGBps); ok {
			f.Ceiling = &c
		}
		if peak, ok := computePeak(doc, recs); ok {
			f.YLabel = "TF/s (2·M·N·K / time)"
			f.Ceiling = &peak
			y = func(r Record) float64 { return r.TFlops }
		}
	}
	f.Title = suite + ": " + strings.SplitN(f.YLabel, " ", 2)[0]
	if f.Ceiling != nil {
		f.Title += fmt.Sprintf(" against the %s, %s %s", ceilingName(f.Ceiling.Name), fmtValue(math.Round(f.Ceiling.Value)), f.Ceiling.Unit)
	}
	// Series names: the variant, with its kernel where the suite's own
	// kernels are several, and "(hot)" where the suite has both regimes.
	kernelsOf := map[string]bool{}
	regimes := map[string]bool{}
	for _, r := range recs {
		if !isPeer(r) {
			kernelsOf[r.Kernel] = true
		}
		regimes[r.Regime] = true
	}
	name := func(r Record) string {
		n := r.Variant
		if len(kernelsOf) > 1 && !isPeer(r) {
			n = r.Kernel + "/" + n
		}
		if len(regimes) > 1 && r.Regime == Hot && !strings.Contains(n, "hot") {
			n += " (hot)"
		}
		return n
	}
	var shapes []string
	for _, r := range recs {
		if !slices.Contains(shapes, r.Shape) {
			shapes = append(shapes, r.Shape)
		}
		if n := name(r); !slices.Contains(f.Names, n) {
			f.Names = append(f.Names, n)
		}
	}
	// The suite's own series first, in variant order, the peer last.
	slices.SortStableFunc(f.Names, func(a, b string) int {
		return cmp.Compare(boolInt(slices.Contains(peerVariants, a)), boolInt(slices.Contains(peerVariants, b)))
	})
	if suite == "copy" {
		shapes = []string{"all sizes"}
	}
	for _, shape := range shapes {
		p := Panel{Shape: shape}
		byName := map[string]*Series{}
		for _, r := range recs {
			if r.Shape != shape && suite != "copy" {
				continue
			}
			n := name(r)
			s := byName[n]
			if s == nil {
				s = &Series{Name: n, Peer: isPeer(r)}
				byName[n] = s
			}
			s.Points = append(s.Points, Point{X: x(r), Y: y(r)})
			if opts.Pick != nil && !isPeer(r) {
				if v, law := opts.Pick(suite, r.Kernel, r.Shape, r.M); v == r.Variant {
					p.Picks = append(p.Picks, Point{X: x(r), Y: y(r)})
					f.PickLabel = "law's pick (" + law + ")"
				}
			}
		}
		top := 0.0
		for _, n := range f.Names {
			if s := byName[n]; s != nil {
				slices.SortFunc(s.Points, func(a, b Point) int { return cmp.Compare(a.X, b.X) })
				p.Series = append(p.Series, *s)
				for _, pt := range s.Points {
					top = max(top, pt.Y)
				}
			}
		}
		slices.SortFunc(p.Picks, func(a, b Point) int { return cmp.Compare(a.X, b.X) })
		p.YMax = top * 1.08
		if f.Ceiling != nil && f.Ceiling.Value <= CeilingReach*top {
			p.CeilingOnScale = true
			p.YMax = max(p.YMax, f.Ceiling.Value*1.05)
		}
		if p.YMax <= 0 {
			p.YMax = 1
		}
		f.Panels = append(f.Panels, p)
	}
	return f
}

// ceilingName is a ceiling's name for a person.
func ceilingName(name string) string {
	switch name {
	case CeilingCopyGBps:
		return "copy ceiling"
	case CeilingFP8TFlops:
		return "fp8 matrix peak"
	case CeilingBF16TFlops:
		return "bf16 matrix peak"
	}
	return name
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func isPeer(r Record) bool { return slices.Contains(peerVariants, r.Variant) }

func allZero(recs []Record, v func(Record) float64) bool {
	for _, r := range recs {
		if v(r) != 0 {
			return false
		}
	}
	return true
}

// computePeak returns the matrix peak a suite is judged against when it is
// compute-bound: the median flops per byte of its own kernels' records
// above the ridge point (peak / copy ceiling). The fp8 peak when the run
// measured it, else bf16.
func computePeak(doc *Document, recs []Record) (Ceiling, bool) {
	copyC, ok := doc.Ceiling(CeilingCopyGBps)
	if !ok || copyC.Value <= 0 {
		return Ceiling{}, false
	}
	peak, ok := doc.Ceiling(CeilingFP8TFlops)
	if !ok {
		if peak, ok = doc.Ceiling(CeilingBF16TFlops); !ok {
			return Ceiling{}, false
		}
	}
	var intensity []float64
	for _, r := range recs {
		if !isPeer(r) && r.Bytes > 0 && r.Flops > 0 {
			intensity = append(intensity, float64(r.Flops)/float64(r.Bytes))
		}
	}
	if len(intensity) == 0 {
		return Ceiling{}, false
	}
	slices.Sort(intensity)
	ridge := peak.Value * 1e12 / (copyC.Value * 1e9)
	return peak, intensity[len(intensity)/2] > ridge
}

// copyBytes is the buffer size of a copy record: its shape ("64MiB"), or
// half the bytes it moves (read + write).
func copyBytes(r Record) int64 {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n, err := strconv.ParseInt(strings.TrimSuffix(r.Shape, u.suffix), 10, 64); err == nil && strings.HasSuffix(r.Shape, u.suffix) {
			return n * u.mult
		}
	}
	return r.Bytes / 2
}

// blocksOf is the block count of a launch record ("blocks=132"), 0 when
// the variant does not say.
func blocksOf(r Record) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(r.Variant, "blocks="))
	return n
}

// String writes the figure's data, one line per point, for golden files.
func (f Figure) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "figure %s: %s\nx: %s (%s)\ny: %s\n", f.Suite, f.Title, f.XLabel, f.XKind, f.YLabel)
	if f.Ceiling != nil {
		fmt.Fprintf(&b, "ceiling: %s %s %s\n", f.Ceiling.Name, fmtValue(f.Ceiling.Value), f.Ceiling.Unit)
	}
	if f.PickLabel != "" {
		fmt.Fprintf(&b, "picks: %s\n", f.PickLabel)
	}
	fmt.Fprintf(&b, "series: %s\n", strings.Join(f.Names, ", "))
	for _, p := range f.Panels {
		fmt.Fprintf(&b, "panel %s: y 0..%s, ceiling on scale %v\n", p.Shape, fmtValue(p.YMax), p.CeilingOnScale)
		for _, s := range p.Series {
			var pts []string
			for _, pt := range s.Points {
				pts = append(pts, fmt.Sprintf("(%s, %s)", fmtValue(pt.X), fmtValue(pt.Y)))
			}
			peer := ""
			if s.Peer {
				peer = " [peer]"
			}
			fmt.Fprintf(&b, "  %s%s: %s\n", s.Name, peer, strings.Join(pts, " "))
		}
		if len(p.Picks) > 0 {
			var pts []string
			for _, pt := range p.Picks {
				pts = append(pts, fmt.Sprintf("(%s, %s)", fmtValue(pt.X), fmtValue(pt.Y)))
			}
			fmt.Fprintf(&b, "  picks: %s\n", strings.Join(pts, " "))
		}
	}
	return b.String()
}

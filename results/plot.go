package results

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plot formats.
const (
	SVG = "svg"
	PNG = "png"
)

// Plot writes one file per suite of doc (Figures) into dir in each of the
// formats (SVG, PNG; none: SVG) and returns the paths written.
func Plot(doc *Document, dir string, opts PlotOptions, formats ...string) ([]string, error) {
	if doc == nil {
		return nil, errors.New("results: plot: nil document")
	}
	if err := doc.Validate(); err != nil {
		return nil, fmt.Errorf("results: plot: %w", err)
	}
	if len(formats) == 0 {
		formats = []string{SVG}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("results: plot: %w", err)
	}
	var paths []string
	for _, f := range Figures(doc, opts) {
		for _, format := range formats {
			b, err := RenderFigure(f, format)
			if err != nil {
				return paths, fmt.Errorf("results: plot %s: %w", f.Suite, err)
			}
			path := filepath.Join(dir, fileName(f.Suite)+"."+format)
			if err := writeAtomic(path, b); err != nil {
				return paths, err
			}
			paths = append(paths, path)
		}
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

// palette is the Okabe-Ito colour-blind-safe qualitative palette (Okabe &
// Ito, "Color Universal Design", 2008) without its black, which marks the
// vendor peer, its yellow darkened to read on white, and a brown and a grey
// for suites with more variants.
var palette = []color.Color{
	color.RGBA{0xE6, 0x9F, 0x00, 0xff}, // orange
	color.RGBA{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	color.RGBA{0x00, 0x9E, 0x73, 0xff}, // bluish green
	color.RGBA{0x00, 0x72, 0xB2, 0xff}, // blue
	color.RGBA{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	color.RGBA{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	color.RGBA{0x99, 0x88, 0x00, 0xff}, // yellow, darkened
	color.RGBA{0x8C, 0x56, 0x4B, 0xff}, // brown (added)
	color.RGBA{0x80, 0x80, 0x80, 0xff}, // grey (added)
}

// dashes give series past the palette's length a second look.
var dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}}

// shapes are the markers, one per series in turn.
var markers = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.PlusGlyph{}, draw.CrossGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}}

// seriesStyle is series i's line and marker; the peer is black and thick.
func seriesStyle(i int, peer bool) (draw.LineStyle, draw.GlyphStyle) {
	ls := draw.LineStyle{Color: palette[i%len(palette)], Width: vg.Points(1.5), Dashes: dashes[(i/len(palette))%len(dashes)]}
	gs := draw.GlyphStyle{Color: ls.Color, Radius: vg.Points(3), Shape: markers[i%len(markers)]}
	if peer {
		ls = draw.LineStyle{Color: color.Black, Width: vg.Points(2.5), Dashes: []vg.Length{vg.Points(8), vg.Points(3)}}
		gs = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(3.5), Shape: draw.BoxGlyph{}}
	}
	return ls, gs
}

var (
	ceilingStyle = draw.LineStyle{Color: color.Gray{Y: 0x50}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(2), vg.Points(3)}}
	pickStyle    = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(6), Shape: draw.RingGlyph{}}
	tickFont     = vg.Points(9)
	labelFont    = vg.Points(10)
)

// RenderFigure draws f: its panels in a grid (two columns), the legend in
// a column of its own to their right, so it never covers data.
func RenderFigure(f Figure, format string) ([]byte, error) {
	cols := min(2, len(f.Panels))
	rows := (len(f.Panels) + cols - 1) / cols
	panelW, panelH, legendW := 13*vg.Centimeter, 9*vg.Centimeter, 6*vg.Centimeter
	titleH := vg.Centimeter
	w, h := vg.Length(cols)*panelW+legendW, vg.Length(rows)*panelH+titleH
	var c vg.CanvasWriterTo
	switch format {
	case SVG:
		c = vgsvg.New(w, h)
	case PNG:
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(110), vgimg.UseBackgroundColor(color.White))}
	default:
		return nil, fmt.Errorf("unknown plot format %q (svg, png)", format)
	}
	dc := draw.New(c)

	// The figure's title across the top.
	title := plot.New()
	title.HideAxes()
	title.Title.Text = f.Title
	title.Title.TextStyle.Font.Size = vg.Points(13)
	title.Draw(draw.Crop(dc, 0, 0, h-titleH, 0))

	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
	}
	for i, p := range f.Panels {
		pl, err := panelPlot(f, p)
		if err != nil {
			return nil, err
		}
		grid[i/cols][i%cols] = pl
	}
	area := draw.Crop(dc, 0, -legendW, 0, -titleH)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: 5 * vg.Millimeter, PadY: 5 * vg.Millimeter,
		PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 2 * vg.Millimeter}
	canvases := plot.Align(grid, tiles, area)
	for i := range grid {
		for j := range grid[i] {
			if grid[i][j] != nil {
				grid[i][j].Draw(canvases[i][j])
			}
		}
	}

	// The legend: one entry per series (same colour and marker in every
	// panel), the ceiling, the law's picks.
	lg := plot.NewLegend()
	lg.Top, lg.Left = true, true
	lg.TextStyle.Font.Size = labelFont
	lg.ThumbnailWidth = vg.Points(28)
	lg.Padding = vg.Points(3)
	for i, n := range f.Names {
		ls, gs := seriesStyle(i, peerName(f, n))
		l := &plotter.Line{LineStyle: ls}
		lg.Add(n, l, &plotter.Scatter{GlyphStyle: gs})
	}
	if f.Ceiling != nil {
		lg.Add(fmt.Sprintf("%s %s %s", ceilingName(f.Ceiling.Name), fmtValue(math.Round(f.Ceiling.Value)), f.Ceiling.Unit), &plotter.Line{LineStyle: ceilingStyle})
		if off := offScale(f); off != "" {
			lg.Add("  (above the scale: "+off+")", &plotter.Line{})
		}
	}
	if f.PickLabel != "" {
		lg.Add(f.PickLabel, &plotter.Scatter{GlyphStyle: pickStyle})
	}
	lg.Draw(draw.Crop(dc, w-legendW+4*vg.Millimeter, 0, 0, -titleH-4*vg.Millimeter))

	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func peerName(f Figure, name string) bool {
	for _, p := range f.Panels {
		for _, s := range p.Series {
			if s.Name == name {
				return s.Peer
			}
		}
	}
	return false
}

// offScale lists the panels whose ceiling is above their y axis.
func offScale(f Figure) string {
	var out []string
	for _, p := range f.Panels {
		if !p.CeilingOnScale {
			out = append(out, p.Shape)
		}
	}
	if len(out) == len(f.Panels) {
		return "every panel"
	}
	return strings.Join(out, ", ")
}

func panelPlot(f Figure, p Panel) (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = p.Shape
	pl.Title.TextStyle.Font.Size = labelFont
	pl.X.Label.Text, pl.Y.Label.Text = f.XLabel, f.YLabel
	for _, a := range []*plot.Axis{&pl.X, &pl.Y} {
		a.Label.TextStyle.Font.Size = labelFont
		a.Tick.Label.Font.Size = tickFont
	}
	pl.Add(plotter.NewGrid())
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range p.Series {
		for _, pt := range s.Points {
			lo, hi = min(lo, pt.X), max(hi, pt.X)
		}
	}
	if lo > hi {
		lo, hi = 0, 1
	}
	for _, s := range p.Series {
		i := indexOf(f.Names, s.Name)
		ls, gs := seriesStyle(i, s.Peer)
		xys := make(plotter.XYs, len(s.Points))
		for j, pt := range s.Points {
			xys[j] = plotter.XY{X: pt.X, Y: pt.Y}
		}
		if len(xys) > 1 {
			l, err := plotter.NewLine(xys)
			if err != nil {
				return nil, err
			}
			l.LineStyle = ls
			pl.Add(l)
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = gs
		pl.Add(sc)
	}
	if p.CeilingOnScale && f.Ceiling != nil {
		l, err := plotter.NewLine(plotter.XYs{{X: xLo(f, lo, hi), Y: f.Ceiling.Value}, {X: xHi(f, lo, hi), Y: f.Ceiling.Value}})
		if err != nil {
			return nil, err
		}
		l.LineStyle = ceilingStyle
		pl.Add(l)
	}
	if len(p.Picks) > 0 {
		xys := make(plotter.XYs, len(p.Picks))
		for j, pt := range p.Picks {
			xys[j] = plotter.XY{X: pt.X, Y: pt.Y}
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = pickStyle
		pl.Add(sc)
	}
	pl.Y.Min, pl.Y.Max = 0, p.YMax
	pl.X.Min, pl.X.Max = xLo(f, lo, hi), xHi(f, lo, hi)
	switch f.XKind {
	case "M", "bytes":
		if lo > 0 {
			pl.X.Scale = plot.LogScale{}
			pl.X.Tick.Marker = pow2Ticks{bytes: f.XKind == "bytes"}
		}
	case "blocks":
		pl.X.Tick.Marker = pointTicks(p)
	}
	return pl, nil
}

// xLo and xHi pad the x range: a factor on the log axes, a tenth of the
// span (at least one unit) on the linear one.
func xLo(f Figure, lo, hi float64) float64 {
	if f.XKind != "blocks" && lo > 0 {
		return lo / 1.4
	}
	return lo - max(1, (hi-lo)/10)
}

func xHi(f Figure, lo, hi float64) float64 {
	if f.XKind != "blocks" && lo > 0 {
		return hi * 1.4
	}
	return hi + max(1, (hi-lo)/10)
}

func indexOf(names []string, n string) int {
	for i, v := range names {
		if v == n {
			return i
		}
	}
	return 0
}

// pow2Ticks marks a log2 axis at powers of two, labelled as integers (M)
// or binary sizes (bytes), with unlabelled minor ticks between labels
// when the labels skip powers.
type pow2Ticks struct{ bytes bool }

func (t pow2Ticks) Ticks(lo, hi float64) []plot.Tick {
	var all []float64
	for v := 1.0; v <= hi*1.0001; v *= 2 {
		if v >= lo*0.9999 {
			all = append(all, v)
		}
	}
	step := 1 // label every power, or every second one when there are many
	if len(all) > 8 {
		step = 2
	}
	var ts []plot.Tick
	for i, v := range all {
		tk := plot.Tick{Value: v}
		if i%step == 0 {
			tk.Label = t.label(v)
		}
		ts = append(ts, tk)
	}
	return ts
}

func (t pow2Ticks) label(v float64) string {
	if !t.bytes {
		return fmtValue(v)
	}
	for _, u := range []struct {
		name string
		size float64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if v >= u.size {
			return fmtValue(v/u.size) + " " + u.name
		}
	}
	return fmtValue(v) + " B"
}

// pointTicks labels a linear axis at the panel's x values.
func pointTicks(p Panel) plot.TickerFunc {
	return func(lo, hi float64) []plot.Tick {
		var ts []plot.Tick
		seen := map[float64]bool{}
		for _, s := range p.Series {
			for _, pt := range s.Points {
				if !seen[pt.X] && pt.X >= lo && pt.X <= hi {
					seen[pt.X] = true
					ts = append(ts, plot.Tick{Value: pt.X, Label: fmtValue(pt.X)})
				}
			}
		}
		return ts
	}
}

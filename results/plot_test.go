package results

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parharness/parharness/internal/golden"
)

// decPicks is the dec suite's split-K law as the CLI supplies it: the S
// each record says the run launched (Extra["S_law"]).
func decPicks(doc *Document) func(suite, kernel, shape string, M int) (string, string) {
	return func(suite, kernel, shape string, M int) (string, string) {
		for _, r := range doc.Records {
			if r.Suite == suite && r.Kernel == kernel && r.Shape == shape && r.M == M {
				if S, ok := r.Extra["S_law"]; ok {
					return fmt.Sprintf("S%d", int(S)), "gemm.DecSplitK"
				}
			}
		}
		return "", ""
	}
}

// The plots' data of real H200 runs: for dec, GB/s against M (log2) with
// the copy ceiling, cuBLASLt on the same axes, the law's picks marked; for
// pre, TF/s against the fp8 peak; for copy, GB/s against the buffer size;
// for grpq, the y axis at the data, the ceiling above it; for launch, µs
// against blocks.
func TestFiguresOfH200Runs(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		picks      bool
	}{
		{"dec", "h200-2026-12-01/dec.json", true},
		{"pre", "h200-2026-12-01/final/pre.json", false},
		{"copy", "h200-2026-12-01/copy.json", false},
		{"grpq", "h200-2026-12-01/grpq.json", false},
		{"launch", "h200-2026-12-01/launch.json", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := Read(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			var opts PlotOptions
			if tc.picks {
				opts.Pick = decPicks(doc)
			}
			figs := Figures(doc, opts)
			if len(figs) != 1 {
				t.Fatalf("%d figures, want one per suite", len(figs))
			}
			golden.Check(t, filepath.Join("testdata", "plot-"+tc.name+".txt"), []byte(figs[0].String()))
		})
	}
}

// The rules the figures keep, on the dec run: the peer is in every panel,
// every pick lies on a series point, the y axis reaches the highest point,
// and the ceiling sets the axis only when it is near the data.
func TestFigureRules(t *testing.T) {
	doc, err := Read("h200-2026-12-01/dec.json")
	if err != nil {
		t.Fatal(err)
	}
	f := Figures(doc, PlotOptions{Pick: decPicks(doc)})[0]
	if f.XKind != "M" || !strings.HasPrefix(f.YLabel, "GB/s") || f.Ceiling == nil || f.Ceiling.Name != CeilingCopyGBps {
		t.Fatalf("dec axes: x %s, y %s, ceiling %+v", f.XKind, f.YLabel, f.Ceiling)
	}
	for _, p := range f.Panels {
		peer, top := false, 0.0
		on := map[Point]bool{}
		for _, s := range p.Series {
			peer = peer || s.Peer
			for _, pt := range s.Points {
				on[pt] = true
				top = max(top, pt.Y)
			}
		}
		if !peer {
			t.Errorf("%s: no peer series", p.Shape)
		}
		if len(p.Picks) != 3 {
			t.Errorf("%s: %d picks, want one per M (3)", p.Shape, len(p.Picks))
		}
		for _, pk := range p.Picks {
			if !on[pk] {
				t.Errorf("%s: pick %v is on no series", p.Shape, pk)
			}
		}
		if p.YMax < top || (p.CeilingOnScale && p.YMax < f.Ceiling.Value) {
			t.Errorf("%s: y axis to %g below the data (%g) or the drawn ceiling", p.Shape, p.YMax, top)
		}
		if p.CeilingOnScale != (f.Ceiling.Value <= CeilingReach*top) {
			t.Errorf("%s: ceiling on scale %v with data top %g", p.Shape, p.CeilingOnScale, top)
		}
	}
	g := Figures(mustRead(t, "h200-2026-12-01/grpq.json"), PlotOptions{})[0]
	for _, p := range g.Panels {
		if p.CeilingOnScale || p.YMax > 200 {
			t.Errorf("grpq %s: the y axis goes to %g (ceiling on scale %v); the data is below 100 GB/s", p.Shape, p.YMax, p.CeilingOnScale)
		}
	}
	pre := Figures(mustRead(t, "h200-2026-12-01/final/pre.json"), PlotOptions{})[0]
	if !strings.HasPrefix(pre.YLabel, "TF/s") || pre.Ceiling == nil || pre.Ceiling.Name != CeilingFP8TFlops {
		t.Errorf("pre: y %s against %+v, want TF/s against the fp8 peak", pre.YLabel, pre.Ceiling)
	}
}

func mustRead(t *testing.T, p string) *Document {
	t.Helper()
	d, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Plot writes one SVG and one PNG per suite; an invalid document or an
// unknown format is an error.
func TestPlotFiles(t *testing.T) {
	doc := mustRead(t, "h200-2026-12-01/dec.json")
	dir := t.TempDir()
	paths, err := Plot(doc, dir, PlotOptions{Pick: decPicks(doc)}, SVG, PNG)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 || !strings.HasSuffix(paths[0], "dec.svg") || !strings.HasSuffix(paths[1], "dec.png") {
		t.Fatalf("paths %v", paths)
	}
	svg, _ := readFile(paths[0])
	for _, want := range []string{"<svg", "cublaslt", "copy ceiling 3941 GB/s", "pick (gemm.DecSplitK)", "gate_up"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("dec.svg lacks %q", want)
		}
	}
	if png, _ := readFile(paths[1]); !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("dec.png is not a PNG")
	}
	if _, err := Plot(doc, dir, PlotOptions{}, "gif"); err == nil {
		t.Error("unknown format: no error")
	}
	bad := synthetic()
	bad.Records = append(bad.Records, bad.Records[0])
	if _, err := Plot(bad, dir, PlotOptions{}); err == nil {
		t.Error("Plot of an invalid document: no error")
	}
}

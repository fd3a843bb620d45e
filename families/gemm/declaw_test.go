package gemm

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parharness/parharness/bench"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/regret"
	"github.com/parharness/parharness/results"
)

// The dec suite's split-K law, scored from a saved run: the picks come from
// the records (Extra["S_law"]), so the saved H200 run
// (results/h200-2026-11-29/dec.json, bench2 dec on da5a3f0) gives the
// figures its log printed: +0.3% time-weighted, law best in 28 of 32
// cells, worst gate_up M=5.
func TestDecLawRegretFromSavedRun(t *testing.T) {
	doc, err := results.Read(filepath.Join("..", "..", "results", "h200-2026-11-29", "dec.json"))
	if err != nil {
		t.Fatal(err)
	}
	s, ok := bench.LookupSuite("dec")
	if !ok || len(s.Laws) < 1 || s.Laws[0].Name != "gemm.DecSplitK" {
		t.Fatalf("dec suite: %v, %d laws, the first not gemm.DecSplitK", ok, len(s.Laws))
	}
	tab, err := s.Laws[0].Regret(doc, "dec")
	if err != nil {
		t.Fatal(err)
	}
	w := tab.Rows[tab.Worst]
	if len(tab.Rows) != 32 || tab.Hits != 28 || math.Abs(tab.Weighted-0.003) > 0.0015 || w.Shape != "gate_up" || w.M != 5 {
		t.Errorf("%d cells, %d hits, weighted %+.2f%%, worst %s M=%d", len(tab.Rows), tab.Hits, 100*tab.Weighted, w.Shape, w.M)
	}
}

// The wgmma bodies' law (DecSplitKFootprint, evaluated now, not the picks
// the records carry) against the saved H200 sweep of every wg split at M =
// 1..64 (results/h200-2026-12-04/dec-wg.json): the law's pick measured in
// every cell, time-weighted regret under 1%, no cell over 3.5%.
func TestDecFootprintLawOnSavedRun(t *testing.T) {
	doc, err := results.Read(filepath.Join("..", "..", "results", "h200-2026-12-04", "dec-wg.json"))
	if err != nil {
		t.Fatal(err)
	}
	names, shapes, err := GemmShapes("qwen38-27b-tp2")
	if err != nil {
		t.Fatal(err)
	}
	shapeOf := map[string]GemmShape{}
	for i, n := range names {
		shapeOf[n] = shapes[i]
	}
	times := map[regret.Cell]map[string]float64{}
	for c, vt := range doc.CellTimes("dec", "pq_gemm_dec", bench.Cold) {
		for v, us := range vt {
			if strings.HasPrefix(v, TagWG+"S") {
				if times[c] == nil {
					times[c] = map[string]float64{}
				}
				times[c][v] = us
			}
		}
	}
	law := func(c regret.Cell) string {
		s := shapeOf[c.Shape]
		for _, k := range DecKernels(c.M, kernels.SM90a, true) {
			if k.Tag == TagWG {
				return decSplitName(TagWG, DecSplitKFootprint(k.Name, c.M, s.N(), s.K, H200SMs))
			}
		}
		return ""
	}
	tab, err := regret.Compute("gemm.DecSplitKFootprint/wg", times, law)
	if err != nil {
		t.Fatal(err)
	}
	w := tab.WorstRow()
	if len(tab.Rows) != 44 || tab.Weighted > 0.01 || w.Regret > 0.035 {
		t.Errorf("%d cells, weighted %+.2f%%, worst %s M=%d %+.1f%% (want 44 cells, <= 1%%, <= 3.5%%)", len(tab.Rows), 100*tab.Weighted, w.Shape, w.M, 100*w.Regret)
	}
}

// DecBody takes wps where the tiles fill more than one wave and leave the
// last one at most half full, and from M = DecBodySpreadM where one wave
// is between half and two-thirds full; wp3 everywhere else.
func TestDecBody(t *testing.T) {
	for _, c := range []struct {
		name    string
		M, N    int
		sms     int
		wantTag string
	}{
		{"gate_up M=1 (272 tiles: last wave 8 of 132)", 1, 17408, 132, TagWPS},
		{"gate_up M=64", 64, 17408, 132, TagWPS},
		{"qkv M=1 (112 tiles: one wave)", 1, 7168, 132, TagWP3},
		{"down M=64 (80 tiles, one wave 61% full)", 64, 5120, 132, TagWPS},
		{"down M=DecBodySpreadM", DecBodySpreadM, 5120, 132, TagWPS},
		{"down M=DecBodySpreadM-1", DecBodySpreadM - 1, 5120, 132, TagWP3},
		{"down M=1", 1, 5120, 132, TagWP3},
		{"qkv M=64 (112 tiles: one wave 85% full)", 64, 7168, 132, TagWP3},
		{"one wave exactly two-thirds full (88 of 132)", 64, 64 * 88, 132, TagWPS},
		{"one wave just over two-thirds full (89 of 132)", 64, 64 * 89, 132, TagWP3},
		{"one wave exactly half full at M=64 (66 of 132)", 64, 64 * 66, 132, TagWPS},
		{"one wave under half full at M=64 (65 of 132)", 64, 64 * 65, 132, TagWP3},
		{"tiny N at M=64 (16 tiles)", 64, 1024, 132, TagWP3},
		{"no SM count at M=64 (taken as 1)", 64, 5120, 0, TagWP3},
		{"exactly one wave", 8, 64 * 132, 132, TagWP3},
		{"one tile past a wave", 8, 64 * 133, 132, TagWPS},
		{"last wave exactly half full (66 of 132)", 8, 64 * (132 + 66), 132, TagWPS},
		{"last wave over half full (67 of 132)", 8, 64 * (132 + 67), 132, TagWP3},
		{"two full waves", 1, 64 * 264, 132, TagWP3},
		{"tiny N (16 tiles, one wave)", 1, 1024, 132, TagWP3},
		{"no SM count (taken as 1; 272 tiles a whole number of waves)", 1, 17408, 0, TagWP3},
		{"SMs not a multiple of 4 (157 tiles on 78)", 1, 64 * 157, 78, TagWPS},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := DecBody(c.M, c.N, c.sms); got != c.wantTag {
				t.Errorf("DecBody(M=%d, N=%d, sms=%d) = %s, want %s", c.M, c.N, c.sms, got, c.wantTag)
			}
		})
	}
}

// The body law on saved H100 sweeps of the build it was fitted for
// (the stream-K tail reads its tile's count first, gemm.ptx md5
// ecf1bbc1). The full sweep (results/2026-12-06j/call2/dec.json, which
// DecBodySpreadM was refitted on): plain launches 43 of 44 cells, the
// worst gate_up M = 1 (+0.9%) where wps's plain launch pays its
// prologue; PDL launches as served 44 of 44. The two A/B runs of the same
// build in call 1 (12 cells each, not fitted on): every cell. Without the
// document's device it scores the baseline's law instead of failing.
func TestDecBodyLawOnSavedRun(t *testing.T) {
	dir := filepath.Join("..", "..", "results", "2026-12-06j")
	doc, err := results.Read(filepath.Join(dir, "call2", "dec.json"))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := bench.LookupSuite("dec")
	law := lawNamed(t, s, "gemm.DecBody")
	t.Run("plain launches", func(t *testing.T) {
		tab, err := law.Regret(doc, "dec")
		if err != nil {
			t.Fatal(err)
		}
		w := tab.Rows[tab.Worst]
		if len(tab.Rows) != 44 || tab.Hits != 43 || tab.Weighted > 0.005 || w.Shape != "gate_up" || w.M != 1 || w.Regret > 0.01 {
			t.Errorf("%d cells, %d hits, weighted %+.2f%%, worst %s M=%d %+.2f%%", len(tab.Rows), tab.Hits, 100*tab.Weighted, w.Shape, w.M, 100*w.Regret)
		}
	})
	pdl := lawNamed(t, s, "gemm.DecBody/pdl")
	t.Run("served under PDL", func(t *testing.T) {
		// Every body's PDL launch, the goal of at most 3% in every cell.
		tab, err := pdl.Regret(doc, "dec")
		if err != nil {
			t.Fatal(err)
		}
		if len(tab.Rows) != 44 || tab.Hits != 44 {
			t.Errorf("%d cells, %d hits; want 44 and 44", len(tab.Rows), tab.Hits)
		}
		for _, r := range tab.Rows {
			if !strings.HasSuffix(r.Pick, "pdl") || r.Regret > 0.03 {
				t.Errorf("%s M=%d: picks %s, regret %+.2f%%; want a PDL launch within 3%%", r.Shape, r.M, r.Pick, 100*r.Regret)
			}
		}
	})
	// Held out: call 1's A/B runs of the landed build (M = 1, 16, 64), and
	// three runs of M = 32, 40, 48 after the refit (results/2026-12-06k:
	// down crosses from wp3 to wps there).
	for _, run := range []string{"2026-12-06j/call1/ab-2-build-trylast.json.gz", "2026-12-06j/call1/ab-6-build-trylast.json.gz",
		"2026-12-06k/call1/spread-1.json.gz", "2026-12-06k/call1/spread-2.json.gz", "2026-12-06k/call1/spread-3.json.gz"} {
		t.Run("held out "+run, func(t *testing.T) {
			d, err := results.Read(filepath.Join(dir, "..", filepath.FromSlash(run)))
			if err != nil {
				t.Fatal(err)
			}
			tab, err := pdl.Regret(d, "dec")
			if err != nil {
				t.Fatal(err)
			}
			if len(tab.Rows) != 12 || tab.Hits != 12 {
				t.Errorf("%d cells, %d hits; want 12 and 12", len(tab.Rows), tab.Hits)
			}
		})
	}
	t.Run("PDL launches not all timed", func(t *testing.T) {
		// A default run times no own law's PDL launch: the table then
		// covers the cells whose pick was timed and says how many it left
		// out, or says it has none, instead of failing on the first.
		full := doc
		law := pdl
		without := func(variant string) *results.Document {
			d := *full
			d.Records = slices.DeleteFunc(slices.Clone(full.Records), func(r results.Record) bool { return r.Variant == variant })
			return &d
		}
		tab, err := law.Regret(without("wpspdl"), "dec")
		if err != nil {
			t.Fatal(err)
		}
		if len(tab.Rows) != 29 || !strings.Contains(tab.Law, "15 cells without the pick's launch left out") {
			t.Errorf("without wpspdl: %d cells, name %q; want gate_up's 11 and down's M = 40..64 left out", len(tab.Rows), tab.Law)
		}
		d := without("wpspdl")
		d.Records = slices.DeleteFunc(d.Records, func(r results.Record) bool { return r.Variant == "wp3pdl" })
		if _, err := law.Regret(d, "dec"); err == nil || !strings.Contains(err.Error(), "timed in none of the 44 cells") {
			t.Errorf("no PDL launch timed: err %v", err)
		}
	})
	t.Run("marks the plots", func(t *testing.T) {
		var last string
		for _, l := range s.Laws {
			if l.Kernel == "pq_gemm_dec" {
				last = l.Name
			}
		}
		if last != "gemm.DecBody" {
			t.Errorf("the dec suite's last pq_gemm_dec law is %s; the plots mark the last one's picks, which must be gemm.DecBody's", last)
		}
	})
	t.Run("no device", func(t *testing.T) {
		d := *doc
		d.Device = nil
		tab, err := law.Regret(&d, "dec")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range tab.Rows {
			if !strings.HasPrefix(r.Pick, "S") {
				t.Fatalf("%s M=%d: picks %s, want the baseline's split", r.Shape, r.M, r.Pick)
			}
		}
	})
}

// lawNamed is suite s's law of that name.
func lawNamed(t *testing.T, s bench.Suite, name string) bench.Law {
	t.Helper()
	for _, l := range s.Laws {
		if l.Name == name {
			return l
		}
	}
	t.Fatalf("the %s suite has no %s law", s.Name, name)
	return bench.Law{}
}

package gemm

import (
	"math"
	"path/filepath"
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

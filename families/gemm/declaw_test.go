package gemm

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/parharness/parharness/bench"
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

package regret

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parharness/parharness/internal/golden"
)

// sweep: a split-K law on two shapes; the law switches to split-K 4 at M >= 16,
// but on "down" splitting pays only from M >= 64.
func sweep() map[Cell]map[string]float64 {
	return map[Cell]map[string]float64{
		{"gate_up", 1}:  {"sk1": 30.0, "sk2": 24.0, "sk4": 22.5},
		{"gate_up", 8}:  {"sk1": 31.0, "sk2": 25.0, "sk4": 23.0},
		{"gate_up", 16}: {"sk1": 33.0, "sk2": 27.0, "sk4": 26.0},
		{"gate_up", 64}: {"sk1": 40.0, "sk2": 41.0, "sk4": 44.0},
		{"down", 1}:     {"sk1": 15.0, "sk2": 12.0, "sk4": 12.0},
		{"down", 8}:     {"sk1": 15.5, "sk2": 12.5, "sk4": 13.0},
		{"down", 16}:    {"sk1": 16.0, "sk2": 13.0, "sk4": 15.0},
		{"down", 64}:    {"sk1": 20.0, "sk2": 22.0, "sk4": 25.0},
	}
}

func law(c Cell) string {
	if c.M >= 16 {
		return "sk4"
	}
	return "sk2"
}

func TestCompute(t *testing.T) {
	tab, err := Compute("splitk-by-M", sweep(), law)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != 8 || tab.Rows[0].Shape != "down" || tab.Rows[0].M != 1 || tab.Rows[7].M != 64 {
		t.Fatalf("rows not sorted by shape, M: %+v", tab.Rows)
	}
	// down M=1: sk2 ties sk4 at the best time: no regret, best shown as the pick.
	if r := tab.Rows[0]; r.Best != "sk2" || r.Regret != 0 {
		t.Errorf("tie: %+v", r)
	}
	w := tab.WorstRow()
	if w.Shape != "down" || w.M != 64 || w.Pick != "sk4" || w.Best != "sk1" {
		t.Errorf("worst = %+v, want down M=64 sk4 vs sk1", w)
	}
	var pick, best, mean float64
	for _, r := range tab.Rows {
		pick += r.PickUS
		best += r.BestUS
		mean += r.PickUS/r.BestUS - 1
	}
	if want := pick/best - 1; math.Abs(tab.Weighted-want) > 1e-12 {
		t.Errorf("Weighted = %v, want %v", tab.Weighted, want)
	}
	if want := mean / 8; math.Abs(tab.Mean-want) > 1e-12 {
		t.Errorf("Mean = %v, want %v", tab.Mean, want)
	}
	if tab.Hits != 3 {
		t.Errorf("Hits = %d, want 3", tab.Hits)
	}

	var text bytes.Buffer
	if err := tab.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "splitk.txt"), text.Bytes())
}

func TestPerfectLaw(t *testing.T) {
	tab, err := Compute("oracle", map[Cell]map[string]float64{
		{"x", 1}: {"a": 1, "b": 2},
		{"x", 2}: {"a": 3, "b": 2},
	}, func(c Cell) string { return map[int]string{1: "a", 2: "b"}[c.M] })
	if err != nil {
		t.Fatal(err)
	}
	if tab.Weighted != 0 || tab.Mean != 0 || tab.Hits != 2 {
		t.Errorf("oracle law: %+v", tab)
	}
	var text bytes.Buffer
	tab.WriteText(&text)
	if !strings.Contains(text.String(), "worst cell: none") {
		t.Errorf("perfect law output does not say so:\n%s", text.String())
	}
}

func TestComputeErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		times map[Cell]map[string]float64
		want  string
	}{
		{"no cells", nil, "no cells"},
		{"empty cell", map[Cell]map[string]float64{{"x", 8}: {}}, "x M=8 has no measured variants"},
		{"unmeasured pick", map[Cell]map[string]float64{{"x", 8}: {"sk1": 1}}, `picks "sk2" in cell x M=8, which was not measured there (measured: sk1)`},
		{"NaN time", map[Cell]map[string]float64{{"x", 8}: {"sk2": math.NaN()}}, "sk2 has time NaN"},
		{"zero time", map[Cell]map[string]float64{{"x", 8}: {"sk2": 0}}, "sk2 has time 0"},
	} {
		_, err := Compute("law", tc.times, func(Cell) string { return "sk2" })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestTrimmedMean(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, 2.5},
		{[]float64{100, 2, 3, 1}, 2.5}, // one outlier each side is ignored
		{[]float64{5, 5, 5, 5, 5}, 5},
		{[]float64{10, 1, 2, 3, 4, 0.5}, 2.5},
	} {
		got, err := TrimmedMean(tc.xs)
		if err != nil || got != tc.want {
			t.Errorf("TrimmedMean(%v) = %v, %v; want %v", tc.xs, got, err, tc.want)
		}
	}
}

func TestTrimmedMeanDoesNotReorder(t *testing.T) {
	xs := []float64{4, 1, 3, 2}
	if _, err := TrimmedMean(xs); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(xs, []float64{4, 1, 3, 2}) {
		t.Errorf("input reordered: %v", xs)
	}
}

func TestBadSamples(t *testing.T) {
	for _, xs := range [][]float64{nil, {1}, {1, 2, 3}} {
		_, err := TrimmedMean(xs)
		if !errors.Is(err, ErrTooFewSamples) {
			t.Errorf("TrimmedMean(%v): err = %v, want ErrTooFewSamples", xs, err)
		}
		if err != nil && !strings.Contains(err.Error(), "at least 4") {
			t.Errorf("error does not say how many are needed: %v", err)
		}
	}
	for _, xs := range [][]float64{
		{1, 2, 3, math.NaN()},
		{1, 2, 3, math.Inf(1)},
		{1, 2, 3, 0},
		{1, 2, 3, -1},
	} {
		if _, err := Spread(xs); err == nil {
			t.Errorf("Spread(%v): no error", xs)
		}
		if _, err := Compare(xs, []float64{1, 2, 3, 4}, 0); err == nil {
			t.Errorf("Compare(%v, ...): no error", xs)
		}
	}
	if _, err := Compare([]float64{1, 2, 3, 4}, []float64{1, 2, 3, 4}, math.NaN()); err == nil {
		t.Error("Compare with NaN control spread: no error")
	}
}

func TestSpread(t *testing.T) {
	// Trimmed set {10, 10.5, 11}: range 1 over median 10.5.
	got, err := Spread([]float64{9, 10, 10.5, 11, 50})
	if err != nil {
		t.Fatal(err)
	}
	if want := 100 / 10.5; math.Abs(got-want) > 1e-12 {
		t.Errorf("Spread = %v, want %v", got, want)
	}
	if got, _ := Spread([]float64{3, 3, 3, 3}); got != 0 {
		t.Errorf("Spread of equal samples = %v, want 0", got)
	}
}

func TestControlSpread(t *testing.T) {
	a := []float64{10, 10, 10, 10, 10}
	b := []float64{10.3, 10.3, 10.3, 10.3}
	got, err := ControlSpread(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-3) > 1e-9 {
		t.Errorf("ControlSpread = %v, want 3 (the apparent difference)", got)
	}
	a = []float64{9, 10, 10.5, 11, 50}
	got, _ = ControlSpread(a, a)
	if want := 100 / 10.5; math.Abs(got-want) > 1e-12 {
		t.Errorf("ControlSpread(a, a) = %v, want the spread %v", got, want)
	}
	if _, err := ControlSpread(a, []float64{1}); err == nil {
		t.Error("short second arm: no error")
	}
}

// jitter returns n samples around center with relative jitter rel, seeded.
func jitter(seed uint64, n int, center, rel float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = center * (1 + rel*(2*r.Float64()-1))
	}
	return xs
}

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name    string
		a, b    []float64
		control float64
		want    string
	}{
		{"5% slower, tight", jitter(1, 8, 100, 0.002), jitter(2, 8, 105, 0.002), 0, Slower},
		{"5% faster, tight", jitter(1, 8, 105, 0.002), jitter(2, 8, 100, 0.002), 0, Faster},
		{"identical code with jitter", jitter(3, 8, 100, 0.01), jitter(4, 8, 100, 0.01), 0, Same},
		{"equal samples", []float64{7, 7, 7, 7}, []float64{7, 7, 7, 7}, 0, Same},
		// Significant by the U test, but smaller than the control's spread.
		{"within control spread", jitter(1, 8, 100, 0.002), jitter(2, 8, 101, 0.002), 2, Same},
		// Beyond the control spread but the samples overlap: not significant.
		{"not significant", []float64{100, 100, 130, 130}, []float64{100, 130, 130, 131}, 1, Same},
		// 4 against 4, fully separated: p = 0.029 < 0.05.
		{"minimum sample", []float64{10, 10.01, 10.02, 10.03}, []float64{11, 11.01, 11.02, 11.03}, 0, Slower},
	} {
		v, err := Compare(tc.a, tc.b, tc.control)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if v.Call != tc.want {
			t.Errorf("%s: Call = %q (ratio %.4f, p %.3f, noise %.2f%%, why %q), want %q",
				tc.name, v.Call, v.Ratio, v.PValue, v.NoisePct, v.Why, tc.want)
		}
		if v.Call == Same && v.Why == "" {
			t.Errorf("%s: no reason given for ~", tc.name)
		}
	}
}

func TestCompareDoesNotReorder(t *testing.T) {
	a := []float64{4, 1, 3, 2}
	b := []float64{8, 5, 7, 6}
	if _, err := Compare(a, b, 0); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a, []float64{4, 1, 3, 2}) || !slices.Equal(b, []float64{8, 5, 7, 6}) {
		t.Errorf("inputs reordered: %v %v", a, b)
	}
}

func TestSummarize(t *testing.T) {
	s, err := Summarize([]float64{5, 1, 4, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	want := Summary{N: 5, Min: 1, Max: 5, Median: 3, Mean: 3, TrimmedMean: 3, SpreadPct: 100 * 2.0 / 3}
	if s != want {
		t.Errorf("Summarize = %+v, want %+v", s, want)
	}
}

func TestCompareValues(t *testing.T) {
	// Errors drawn from seeded inputs: every case's value scatters by a few
	// percent with the seed.
	scatter := func(n int, center, rel float64, phase int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = center * (1 + rel*math.Sin(float64(3*i+phase)))
		}
		return out
	}
	for _, tc := range []struct {
		name string
		a, b []float64
		want string
	}{
		{"reseeded, same code", scatter(40, 1e-3, 0.05, 0), scatter(40, 1e-3, 0.05, 7), Same},
		{"errors up 30%", scatter(40, 1e-3, 0.05, 0), scatter(40, 1.3e-3, 0.05, 7), Higher},
		{"errors down 30%", scatter(40, 1e-3, 0.05, 0), scatter(40, 0.7e-3, 0.05, 7), Lower},
		{"up 5%: within the noise", scatter(40, 1e-3, 0.02, 0), scatter(40, 1.05e-3, 0.02, 7), Same},
		{"one value, up 2x: no test", []float64{0.5}, []float64{1.0}, Unknown},
		{"counts equal", []float64{42, 0, 128}, []float64{42, 0, 128}, Same},
		{"a count changed", []float64{42, 0, 128}, []float64{42, 3, 128}, Changed},
		{"zeros to a fraction", []float64{0, 0, 0, 0, 0}, []float64{0, 0, 0.5, 0, 0}, Unknown}, // no ratio to judge
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := CompareValues(tc.a, tc.b, 10)
			if err != nil {
				t.Fatal(err)
			}
			if v.Call != tc.want {
				t.Errorf("call %q (ratio %.3f p %.3g exact %v), want %q", v.Call, v.Ratio, v.PValue, v.Exact, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name string
		a, b []float64
	}{
		{"unpaired", []float64{1, 2}, []float64{1}},
		{"empty", nil, nil},
		{"NaN", []float64{1, math.NaN()}, []float64{1, 2}},
	} {
		t.Run("error/"+tc.name, func(t *testing.T) {
			if _, err := CompareValues(tc.a, tc.b, 10); err == nil {
				t.Error("no error")
			}
		})
	}
}

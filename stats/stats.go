// Package stats holds the arithmetic of the bench protocol: how repeated
// timings of a kernel become one figure, how much they scatter, and when a
// difference between two variants is a verdict rather than noise. It knows
// nothing of GPUs or of the results document; it imports
// golang.org/x/perf/benchmath for the Mann-Whitney U test and
// github.com/montanaflynn/stats for means and medians.
//
// # The protocol (docs/bench.md)
//
// A rung of an A/B comparison is measured like this:
//
//  1. Interleave the reps: A, B, A, B, ... (the bench engine queues every
//     variant's graph once per round), at least MinSamples (4) of each, so
//     that drift of clocks or temperature lands on both arms alike instead
//     of on whichever ran second.
//  2. Each rep yields one per-call time (graph replay time / calls).
//  3. Summarise each arm with the trimmed mean (TrimmedMean): drop the
//     single highest and single lowest rep and average the rest. One
//     outlier in either direction (a clock dip, a stray interrupt, a
//     lucky cache state) cannot move it.
//  4. Beside every rung, measure an identical-code control: A against
//     itself, interleaved the same way. ControlSpread turns it into the
//     smallest difference this device, in this run, can resolve.
//  5. Compare decides: "faster" or "slower" only when the difference of
//     the trimmed means exceeds the noise (the control's spread, or the
//     samples' own spread when no control was measured) AND the
//     Mann-Whitney U test rejects "same distribution" at p < Alpha. Any
//     other outcome is "~": a difference smaller than the control's
//     spread is not a verdict, however small its p-value.
//
// Both conditions are needed. The U test alone calls a 0.3% shift
// "significant" once the samples are tight, although a rerun on the same
// device moves by more than that; the spread alone cannot tell a real
// shift from two unlucky reps.
//
// Times are positive and finite; functions return an error (prefixed
// "stats:") for bad data and panic only for programmer mistakes such as a
// negative count.
package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"

	mstats "github.com/montanaflynn/stats"
	"golang.org/x/perf/benchmath"
)

// MinSamples is the fewest reps per arm the protocol accepts: the trimmed
// mean drops two, and 4 against 4 is the smallest pair of samples for which
// the two-sided Mann-Whitney U test can reach p < 0.05 (its minimum is
// 2/C(8,4) = 0.029).
const MinSamples = 4

// Alpha is the significance level of the U test in Compare: the usual 5%.
// A diff tests many rows at once, so some false "p < Alpha" are expected
// by chance; the noise threshold (a change must also exceed the control's
// spread) is what keeps them from becoming verdicts, not Alpha.
const Alpha = 0.05

// Calls of Compare.
const (
	Faster = "faster" // b is faster than a beyond the noise, p < Alpha
	Slower = "slower" // b is slower than a beyond the noise, p < Alpha
	Same   = "~"      // no verdict: within the noise, or not significant
)

// ErrTooFewSamples is wrapped by every error about a short sample.
var ErrTooFewSamples = errors.New("too few samples")

// check rejects short samples and values that are not positive finite times.
func check(what string, xs []float64) error {
	if len(xs) < MinSamples {
		return fmt.Errorf("stats: %s: %w: have %d, the protocol needs at least %d reps (interleaved, drop highest and lowest)",
			what, ErrTooFewSamples, len(xs), MinSamples)
	}
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 {
			return fmt.Errorf("stats: %s: sample %d is %v; times must be positive and finite", what, i, x)
		}
	}
	return nil
}

// Trim returns a sorted copy of xs without its single lowest and single
// highest value. It needs at least MinSamples values.
func Trim(xs []float64) ([]float64, error) {
	if err := check("trim", xs); err != nil {
		return nil, err
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[1 : len(s)-1], nil
}

// TrimmedMean drops the highest and the lowest sample and returns the mean
// of the rest. It needs at least MinSamples samples.
func TrimmedMean(xs []float64) (float64, error) {
	t, err := Trim(xs)
	if err != nil {
		return 0, err
	}
	return mean(t), nil
}

// Spread is the relative scatter of xs, in percent: the range of the
// trimmed set (highest and lowest sample dropped) divided by its median.
//
// Note: the range of the trimmed set, not a standard deviation. With the
// 4 to 10 reps a rung gets, a standard deviation is itself too noisy to
// be a threshold, and it assumes a shape the timings do not have (they
// are skewed: a rep can be much slower, rarely much faster). The trimmed
// range is what a reader sees as "the reps agreed to within x%", and it
// ignores the same single outlier the trimmed mean ignores.
func Spread(xs []float64) (float64, error) {
	t, err := Trim(xs)
	if err != nil {
		return 0, err
	}
	return 100 * (t[len(t)-1] - t[0]) / median(t), nil
}

// ControlSpread is the noise figure of an identical-code control, in
// percent: a and b are reps of the SAME code, interleaved as in a real
// A/B. It is the largest of the apparent difference of their trimmed
// means and the Spread of each, that is, the largest difference this
// device showed in this run between runs that cannot differ.
func ControlSpread(a, b []float64) (float64, error) {
	ta, err := TrimmedMean(a)
	if err != nil {
		return 0, fmt.Errorf("stats: control, first arm: %w", err)
	}
	tb, err := TrimmedMean(b)
	if err != nil {
		return 0, fmt.Errorf("stats: control, second arm: %w", err)
	}
	sa, _ := Spread(a)
	sb, _ := Spread(b)
	return max(100*math.Abs(tb/ta-1), sa, sb), nil
}

// Verdict is the outcome of Compare.
type Verdict struct {
	Ratio    float64 // TrimmedMean(b) / TrimmedMean(a); above 1: b is slower
	PValue   float64 // two-sided Mann-Whitney U test; 1 when it could not run
	NoisePct float64 // the threshold |Ratio-1| had to exceed, in percent
	Call     string  // Faster, Slower or Same
	Why      string  // for Same: which condition failed
}

// DeltaPct is the difference of b against a in percent (+5 is 5% slower).
func (v Verdict) DeltaPct() float64 { return 100 * (v.Ratio - 1) }

// Compare decides whether the times b differ from the times a (b is "new",
// a is "old"; smaller is faster).
//
// controlSpreadPct is the spread of the identical-code control measured
// beside this rung (ControlSpread; when comparing two runs, the larger of
// the two runs' controls). When it is not positive, no control was
// measured and the larger Spread of a and b stands in for it.
//
// The call is Faster or Slower only when |Ratio-1| exceeds that noise AND
// the U test gives p < Alpha; otherwise Same, with Why saying which test
// failed.
func Compare(a, b []float64, controlSpreadPct float64) (Verdict, error) {
	ta, err := TrimmedMean(a)
	if err != nil {
		return Verdict{}, fmt.Errorf("stats: compare, first sample: %w", err)
	}
	tb, err := TrimmedMean(b)
	if err != nil {
		return Verdict{}, fmt.Errorf("stats: compare, second sample: %w", err)
	}
	if math.IsNaN(controlSpreadPct) || math.IsInf(controlSpreadPct, 0) {
		return Verdict{}, fmt.Errorf("stats: compare: control spread is %v", controlSpreadPct)
	}
	noise := controlSpreadPct
	if noise <= 0 {
		sa, _ := Spread(a)
		sb, _ := Spread(b)
		noise = max(sa, sb)
	}
	v := Verdict{Ratio: tb / ta, NoisePct: noise, Call: Same}

	// benchmath sorts the values of a Sample in place: hand it copies.
	th := benchmath.DefaultThresholds
	th.CompareAlpha = Alpha
	c := benchmath.AssumeNothing.Compare(
		benchmath.NewSample(slices.Clone(a), &th),
		benchmath.NewSample(slices.Clone(b), &th))
	v.PValue = c.P

	delta := math.Abs(100 * (v.Ratio - 1))
	switch {
	case delta <= noise:
		v.Why = fmt.Sprintf("|%+.2f%%| within noise %.2f%%", v.DeltaPct(), noise)
	case !(c.P < Alpha):
		v.Why = fmt.Sprintf("p=%.3f not below %.2f", c.P, Alpha)
	case v.Ratio < 1:
		v.Call = Faster
	default:
		v.Call = Slower
	}
	return v, nil
}

// Summary holds the figures a results record keeps for one sample.
type Summary struct {
	N           int
	Min, Max    float64
	Median      float64
	Mean        float64
	TrimmedMean float64
	SpreadPct   float64
}

// Summarize computes every figure of Summary. It needs at least
// MinSamples positive finite samples.
func Summarize(xs []float64) (Summary, error) {
	t, err := Trim(xs)
	if err != nil {
		return Summary{}, err
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return Summary{
		N:           len(s),
		Min:         s[0],
		Max:         s[len(s)-1],
		Median:      median(s),
		Mean:        mean(s),
		TrimmedMean: mean(t),
		SpreadPct:   100 * (t[len(t)-1] - t[0]) / median(t),
	}, nil
}

// mean and median are montanaflynn/stats' (the mean sums in order; the
// median sorts a copy and averages the two middle values of an even
// count). They are called on non-empty samples only, so their error
// (empty input) cannot occur.
func mean(xs []float64) float64 {
	m, _ := mstats.Mean(xs)
	return m
}

func median(s []float64) float64 {
	m, _ := mstats.Median(s)
	return m
}

// Median is the median of xs (montanaflynn/stats; xs is not reordered),
// 0 for no values.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return median(xs)
}

// Calls of CompareValues that are not Same.
const (
	Higher  = "higher"  // b's values are above a's beyond the noise, p < Alpha
	Lower   = "lower"   // below
	Changed = "changed" // exact counts that differ
	Unknown = "?"       // beyond the noise, but too few values for the U test
)

// ValuesVerdict is the outcome of CompareValues.
type ValuesVerdict struct {
	N        int     // pairs compared
	Ratio    float64 // median of b[i]/a[i] over the pairs with a[i] > 0; 0 when none
	PValue   float64 // two-sided Mann-Whitney U test of a against b; 1 when it could not run
	NoisePct float64 // the threshold |Ratio-1| had to exceed, in percent
	Exact    bool    // every value is an integer: compared exactly, pair by pair
	Differ   int     // Exact: pairs whose values differ
	Call     string  // Same, Higher, Lower, Changed or Unknown
}

// CompareValues compares two runs' values of one figure over the same
// cases: a[i] and b[i] belong to case i. It serves gate metrics, which are
// not times: they may be zero, and each case has one value per run.
//
// Counts (every value an integer: cases, mismatches, registers) do not
// scatter between runs, so they are compared exactly: Changed when any
// pair differs. Any other figure (an error drawn from seeded random
// inputs) scatters with the seed, and is called Higher or Lower only
// when the median of the per-case ratios is beyond noisePct AND the U test
// on the two sets of values gives p < Alpha; with fewer than MinSamples
// pairs there is no test, and a ratio beyond the noise is Unknown; so is
// a change from all-zero old values, which have no ratio.
func CompareValues(a, b []float64, noisePct float64) (ValuesVerdict, error) {
	if len(a) != len(b) {
		return ValuesVerdict{}, fmt.Errorf("stats: compare values: %d against %d values; they must be paired by case", len(a), len(b))
	}
	if len(a) == 0 {
		return ValuesVerdict{}, errors.New("stats: compare values: no values")
	}
	v := ValuesVerdict{N: len(a), PValue: 1, NoisePct: noisePct, Call: Same, Exact: true}
	var ratios []float64
	for i := range a {
		for _, x := range []float64{a[i], b[i]} {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return ValuesVerdict{}, fmt.Errorf("stats: compare values: value %d is %v; figures must be finite", i, x)
			}
			if x != math.Trunc(x) {
				v.Exact = false
			}
		}
		if a[i] != b[i] {
			v.Differ++
		}
		if a[i] > 0 {
			ratios = append(ratios, b[i]/a[i])
		}
	}
	if len(ratios) > 0 {
		slices.Sort(ratios)
		v.Ratio = median(ratios)
	}
	if v.Exact {
		if v.Differ > 0 {
			v.Call = Changed
		}
		return v, nil
	}
	if v.Ratio == 0 { // every old value 0: no ratio to judge
		if v.Differ > 0 {
			v.Call = Unknown
		}
		return v, nil
	}
	if math.Abs(100*(v.Ratio-1)) <= noisePct {
		return v, nil
	}
	if v.N < MinSamples {
		v.Call = Unknown
		return v, nil
	}
	th := benchmath.DefaultThresholds
	th.CompareAlpha = Alpha
	c := benchmath.AssumeNothing.Compare(
		benchmath.NewSample(slices.Clone(a), &th),
		benchmath.NewSample(slices.Clone(b), &th))
	v.PValue = c.P
	if c.P < Alpha {
		v.Call = map[bool]string{true: Higher, false: Lower}[v.Ratio > 1]
	}
	return v, nil
}

package results

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat"
)

// RoofFit is a straight line through a regime's roof records (FlagRoof):
// a launch that only streams its bytes takes FixedUS plus the bytes at
// RateGBps. Over a suite's shapes this separates what a lone launch pays
// whatever its size (launch, first bytes, ramp, and in the isolated
// regime the events' edges) from the rate it streams at, so it says from
// which size a read can reach a given bandwidth at all.
type RoofFit struct {
	Regime     string
	Cells      int     // roof records fitted
	Sizes      int     // distinct byte counts among them (at least 2)
	FixedUS    float64 // the intercept: µs at zero bytes
	RateGBps   float64 // 1 / slope
	MaxResidUS float64 // the largest |measured - fitted| over the cells
}

// timedRoof reports whether r is a roof record of suite with a time its
// check did not void.
func (r *Record) timedRoof(suite string) bool {
	return r.Suite == suite && r.HasFlag(FlagRoof) && !r.Failed() && r.TrimmedMeanUS > 0
}

// At is the fitted time of a read of n bytes, in µs.
func (f RoofFit) At(n float64) float64 { return f.FixedUS + n/(1e3*f.RateGBps) }

// BytesFrom is the size from which a read reaches gbps on average (its
// bytes over its time), and false where no size does (gbps at or above
// the rate).
func (f RoofFit) BytesFrom(gbps float64) (float64, bool) {
	if gbps >= f.RateGBps || gbps <= 0 {
		return 0, false
	}
	// n / (1e3 (F + n / (1e3 R))) = g  =>  n = 1e3 g F / (1 - g / R)
	return 1e3 * gbps * math.Max(f.FixedUS, 0) / (1 - gbps/f.RateGBps), true
}

// RoofFits fits each regime of suite whose roof records span at least
// two sizes, sorted by regime; a regime whose line does not rise with
// the bytes (no rate to speak of) is left out.
func (d *Document) RoofFits(suite string) []RoofFit {
	type pts struct{ x, y []float64 }
	by := map[string]*pts{}
	for i := range d.Records {
		r := &d.Records[i]
		if !r.timedRoof(suite) || r.Bytes <= 0 {
			continue
		}
		p := by[r.Regime]
		if p == nil {
			p = &pts{}
			by[r.Regime] = p
		}
		p.x = append(p.x, float64(r.Bytes))
		p.y = append(p.y, r.TrimmedMeanUS)
	}
	var out []RoofFit
	for reg, p := range by {
		sizes := map[float64]bool{}
		for _, x := range p.x {
			sizes[x] = true
		}
		if len(sizes) < 2 {
			continue
		}
		fixed, slope := stat.LinearRegression(p.x, p.y, nil, false)
		if slope <= 0 {
			continue
		}
		f := RoofFit{Regime: reg, Cells: len(p.x), Sizes: len(sizes), FixedUS: fixed, RateGBps: 1 / (1e3 * slope)}
		for i, x := range p.x {
			f.MaxResidUS = math.Max(f.MaxResidUS, math.Abs(p.y[i]-f.At(x)))
		}
		out = append(out, f)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Regime < out[b].Regime })
	return out
}

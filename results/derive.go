package results

import (
	"fmt"
	"slices"

	"github.com/parharness/parharness/regret"
	"github.com/parharness/parharness/stats"
)

// Derive fills the figures of r from its samples, Bytes and Flops:
// MedianUS, MeanUS, TrimmedMeanUS, and GBps and TFlops from the trimmed
// mean. It needs at least stats.MinSamples samples.
func (r *Record) Derive() error {
	s, err := stats.Summarize(r.SamplesUS)
	if err != nil {
		return fmt.Errorf("results: %s: %w", r.Key(), err)
	}
	r.MedianUS, r.MeanUS, r.TrimmedMeanUS = s.Median, s.Mean, s.TrimmedMean
	// bytes / (µs · 1e-6) / 1e9 = bytes / µs / 1e3
	r.GBps = float64(r.Bytes) / s.TrimmedMean / 1e3
	// flops / (µs · 1e-6) / 1e12 = flops / µs / 1e6
	r.TFlops = float64(r.Flops) / s.TrimmedMean / 1e6
	return nil
}

// NewControl builds the identical-code control of variant of from the two
// interleaved arms a and b (each at least stats.MinSamples reps).
func NewControl(of string, a, b []float64) (*Control, error) {
	spread, err := stats.ControlSpread(a, b)
	if err != nil {
		return nil, fmt.Errorf("results: control of %s: %w", of, err)
	}
	ta, _ := stats.TrimmedMean(a)
	tb, _ := stats.TrimmedMean(b)
	return &Control{Of: of, ASamplesUS: slices.Clone(a), BSamplesUS: slices.Clone(b), Ratio: tb / ta, SpreadPct: spread}, nil
}

// AddFlag adds flag to r once.
func (r *Record) AddFlag(flag string) {
	if !slices.Contains(r.Flags, flag) {
		r.Flags = append(r.Flags, flag)
		slices.Sort(r.Flags)
	}
}

// HasFlag reports whether r carries flag.
func (r *Record) HasFlag(flag string) bool { return slices.Contains(r.Flags, flag) }

// FlagAboveRoofline flags every cold record whose GBps exceeds the run's
// copy ceiling by more than slackPct percent, and returns their keys. Such
// a figure is not a fast kernel but a leak: some of its bytes came from
// cache, so the cold regime did not hold (docs/bench.md). Hot
// records are not flagged; being above DRAM bandwidth is their point.
// Without a copy ceiling in the document it flags nothing and says so.
func (d *Document) FlagAboveRoofline(slackPct float64) ([]string, error) {
	c, ok := d.Ceiling(CeilingCopyGBps)
	if !ok || c.Value <= 0 {
		return nil, fmt.Errorf("results: no %s ceiling in this run; measure it before flagging records above the roofline", CeilingCopyGBps)
	}
	limit := c.Value * (1 + slackPct/100)
	var keys []string
	for i := range d.Records {
		r := &d.Records[i]
		if r.Regime == Cold && r.GBps > limit {
			r.AddFlag(FlagAboveRoofline)
			keys = append(keys, r.Key())
		}
	}
	return keys, nil
}

// CellTimes collects the trimmed means of one kernel's records in one
// regime as the input of regret.Compute: cell (shape, M) -> variant -> µs.
func (d *Document) CellTimes(suite, kernel, regime string) map[regret.Cell]map[string]float64 {
	out := map[regret.Cell]map[string]float64{}
	for _, r := range d.Records {
		if r.Suite != suite || r.Kernel != kernel || r.Regime != regime || r.TrimmedMeanUS <= 0 || r.Failed() {
			continue
		}
		c := regret.Cell{Shape: r.Shape, M: r.M}
		if out[c] == nil {
			out[c] = map[string]float64{}
		}
		out[c][r.Variant] = r.TrimmedMeanUS
	}
	return out
}

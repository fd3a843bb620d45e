package results

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/parharness/parharness/stats"
)

// MetricRow compares one gate metric across two runs: every key of that
// metric name (one per case, Case.Key) that both runs recorded, judged
// together by stats.CompareValues.
type MetricRow struct {
	Gate, Metric         string
	N                    int     // cases in both runs
	OnlyOld, OnlyNew     int     // cases in one run only
	OldMedian, NewMedian float64 // over the N cases
	stats.ValuesVerdict
	Call string // stats' call, or added / removed when no case is in both
	// Worst is the case that moved most (the largest |log new/old|, or
	// for counts the first that differs), with its two values.
	Worst              string
	WorstOld, WorstNew float64
}

// diffMetrics pairs the gates' metrics by gate, metric name and case.
func diffMetrics(old, new []GateRecord, noisePct float64) ([]MetricRow, error) {
	type side struct{ old, new map[string]float64 } // by case string
	groups := map[[2]string]*side{}
	add := func(gs []GateRecord, isNew bool) error {
		for _, g := range gs {
			for k, v := range g.Metrics {
				metric, c, err := ParseMetricKey(k)
				if err != nil {
					return fmt.Errorf("results: diff: gate %s: %w", g.Gate, err)
				}
				id := [2]string{g.Gate, metric}
				s := groups[id]
				if s == nil {
					s = &side{map[string]float64{}, map[string]float64{}}
					groups[id] = s
				}
				if isNew {
					s.new[c.String()] = v
				} else {
					s.old[c.String()] = v
				}
			}
		}
		return nil
	}
	if err := add(old, false); err != nil {
		return nil, err
	}
	if err := add(new, true); err != nil {
		return nil, err
	}
	var rows []MetricRow
	for id, s := range groups {
		r := MetricRow{Gate: id[0], Metric: id[1]}
		var a, b []float64
		var cases []string
		for c := range s.old {
			if _, ok := s.new[c]; !ok {
				r.OnlyOld++
			}
		}
		for c := range s.new {
			if _, ok := s.old[c]; ok {
				cases = append(cases, c)
			} else {
				r.OnlyNew++
			}
		}
		slices.Sort(cases)
		for _, c := range cases {
			a, b = append(a, s.old[c]), append(b, s.new[c])
		}
		if len(cases) == 0 {
			r.Call = VerdictAdded
			if r.OnlyOld > 0 {
				r.Call = VerdictRemoved
			}
			rows = append(rows, r)
			continue
		}
		v, err := stats.CompareValues(a, b, noisePct)
		if err != nil {
			return nil, fmt.Errorf("results: diff: gate %s metric %s: %w", r.Gate, r.Metric, err)
		}
		r.N, r.ValuesVerdict, r.Call = len(cases), v, v.Call
		r.OldMedian, r.NewMedian = stats.Median(a), stats.Median(b)
		worst := -1.0
		for i, c := range cases {
			move := 0.0
			switch {
			case a[i] == b[i]:
				continue
			case v.Exact:
				move = math.Inf(1) // the first count that differs
			case a[i] > 0 && b[i] > 0:
				move = math.Abs(math.Log(b[i] / a[i]))
			default:
				move = math.MaxFloat64 // to or from zero
			}
			if move > worst {
				worst, r.Worst, r.WorstOld, r.WorstNew = move, c, a[i], b[i]
			}
			if math.IsInf(move, 1) {
				break
			}
		}
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(x, y MetricRow) int {
		return cmp.Or(cmp.Compare(x.Gate, y.Gate), cmp.Compare(x.Metric, y.Metric))
	})
	return rows, nil
}

// fmtValue prints an integral figure exactly and any other to 4
// significant digits.
func fmtValue(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func (m *MetricRow) note() string {
	var parts []string
	if m.WorstOld != m.WorstNew && m.Call != stats.Same {
		what := "most moved"
		if m.Exact {
			what = fmt.Sprintf("%d of %d differ, first", m.Differ, m.N)
		}
		where := m.Metric
		if m.Worst != "" {
			where = "{" + m.Worst + "}"
		}
		parts = append(parts, fmt.Sprintf("%s %s: %s -> %s", what, where, fmtValue(m.WorstOld), fmtValue(m.WorstNew)))
	}
	if m.OnlyNew > 0 {
		parts = append(parts, cases(m.OnlyNew)+" only in new")
	}
	if m.OnlyOld > 0 {
		parts = append(parts, cases(m.OnlyOld)+" only in old")
	}
	return strings.Join(parts, "; ")
}

func cases(n int) string {
	if n == 1 {
		return "1 case"
	}
	return strconv.Itoa(n) + " cases"
}

var metricHeader = []string{"gate", "metric", "cases", "old", "new", "new/old", "p", "verdict", "note"}

func (m *MetricRow) cells() []string {
	if m.N == 0 {
		return []string{m.Gate, m.Metric, "0", "-", "-", "-", "-", m.Call, m.note()}
	}
	ratio, p := "-", "-"
	if m.Ratio > 0 {
		ratio = fmt.Sprintf("%.3f", m.Ratio)
	}
	if m.PValue < 1 {
		p = fmt.Sprintf("%.3f", m.PValue)
		if m.PValue < 0.001 {
			p = "<0.001"
		}
	}
	return []string{m.Gate, m.Metric, strconv.Itoa(m.N), fmtValue(m.OldMedian), fmtValue(m.NewMedian), ratio, p, m.Call, m.note()}
}

// SlowerThan returns the rows whose verdict is slower (beyond the noise,
// U test p < Alpha) by more than pct percent, roofs left out: what
// --fail-on-slower fails.
func (d *DiffReport) SlowerThan(pct float64) []DiffRow {
	var out []DiffRow
	for _, r := range d.Rows {
		if r.Verdict == VerdictSlower && 100*(r.Ratio-1) > pct && !r.Roof() {
			out = append(out, r)
		}
	}
	return out
}

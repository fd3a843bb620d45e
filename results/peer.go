package results

import (
	"sort"
	"strings"
)

// PeerRow sets a suite's baseline record beside the vendor library's
// record of the same shape, M and regime.
type PeerRow struct {
	Shape, Regime    string
	M                int
	Kernel, Variant  string  // the baseline
	Peer             string  // the vendor kernel (cublaslt_fp8, hipblaslt_fp8, ...)
	KernelUS, PeerUS float64 // trimmed means
	Ratio            float64 // KernelUS / PeerUS (< 1: faster than the peer)
	KernelGBps       float64
	KernelBytes      int64 // the baseline record's bytes
	PeerGBps         float64
	RoofGBps         float64 // the cell's roof record (FlagRoof), 0 when it has none
}

// IsPeer reports whether a record is a vendor library's (the figure to beat).
func IsPeer(r *Record) bool {
	return strings.HasPrefix(r.Kernel, "cublaslt_") || strings.HasPrefix(r.Kernel, "hipblaslt_")
}

// PeerRows pairs each timed baseline of suite (the record carrying the
// control) with the peer measured at its shape, M and regime, sorted by
// regime, shape and M.
func (d *Document) PeerRows(suite string) []PeerRow {
	return d.peerRows(suite, func(r *Record) bool { return r.Control != nil }, false)
}

// BestPeerRows pairs, in each shape, M and regime of suite that has a
// peer record, the fastest record whose output was checked and matched
// (Check PASS: attribution variants that compute no GEMM never count), of
// any kernel and variant but the peer's and a roof's (FlagRoof), with the
// peer; sorted as PeerRows.
func (d *Document) BestPeerRows(suite string) []PeerRow {
	return d.peerRows(suite, func(r *Record) bool { return r.Check != nil && r.Check.Status == CheckPass }, true)
}

// peerRows pairs the records of suite that keep (one per cell, the
// fastest, when best) with the peer of their cell.
func (d *Document) peerRows(suite string, keep func(*Record) bool, best bool) []PeerRow {
	type cell struct {
		shape, regime string
		m             int
	}
	peers, roofs := map[cell]*Record{}, map[cell]float64{}
	for i := range d.Records {
		r := &d.Records[i]
		if r.Suite == suite && IsPeer(r) && !r.Failed() && r.TrimmedMeanUS > 0 {
			peers[cell{r.Shape, r.Regime, r.M}] = r
		}
		if r.timedRoof(suite) {
			roofs[cell{r.Shape, r.Regime, r.M}] = r.GBps
		}
	}
	var out []PeerRow
	at := map[cell]int{} // best: the cell's row in out
	for i := range d.Records {
		r := &d.Records[i]
		if r.Suite != suite || IsPeer(r) || r.HasFlag(FlagRoof) || r.Failed() || r.TrimmedMeanUS <= 0 || !keep(r) {
			continue
		}
		c := cell{r.Shape, r.Regime, r.M}
		p, ok := peers[c]
		if !ok {
			continue
		}
		row := PeerRow{Shape: r.Shape, Regime: r.Regime, M: r.M, Kernel: r.Kernel, Variant: r.Variant, Peer: p.Kernel,
			KernelUS: r.TrimmedMeanUS, PeerUS: p.TrimmedMeanUS, Ratio: r.TrimmedMeanUS / p.TrimmedMeanUS, KernelGBps: r.GBps, KernelBytes: r.Bytes, PeerGBps: p.GBps, RoofGBps: roofs[c]}
		if j, seen := at[c]; best && seen {
			if row.KernelUS < out[j].KernelUS {
				out[j] = row
			}
			continue
		}
		at[c] = len(out)
		out = append(out, row)
	}
	sort.SliceStable(out, func(a, b int) bool {
		x, y := out[a], out[b]
		if x.Regime != y.Regime {
			return x.Regime < y.Regime
		}
		if x.Shape != y.Shape {
			return x.Shape < y.Shape
		}
		return x.M < y.M
	})
	return out
}

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
	PeerGBps         float64
}

// IsPeer reports whether a record is a vendor library's (the figure to beat).
func IsPeer(r *Record) bool {
	return strings.HasPrefix(r.Kernel, "cublaslt_") || strings.HasPrefix(r.Kernel, "hipblaslt_")
}

// PeerRows pairs each timed baseline of suite (the record carrying the
// control) with the peer measured at its shape, M and regime, sorted by
// regime, shape and M.
func (d *Document) PeerRows(suite string) []PeerRow {
	type cell struct {
		shape, regime string
		m             int
	}
	peers := map[cell]*Record{}
	for i := range d.Records {
		r := &d.Records[i]
		if r.Suite == suite && IsPeer(r) && !r.Failed() && r.TrimmedMeanUS > 0 {
			peers[cell{r.Shape, r.Regime, r.M}] = r
		}
	}
	var out []PeerRow
	for i := range d.Records {
		r := &d.Records[i]
		if r.Suite != suite || IsPeer(r) || r.Control == nil || r.Failed() {
			continue
		}
		p, ok := peers[cell{r.Shape, r.Regime, r.M}]
		if !ok {
			continue
		}
		out = append(out, PeerRow{Shape: r.Shape, Regime: r.Regime, M: r.M, Kernel: r.Kernel, Variant: r.Variant, Peer: p.Kernel,
			KernelUS: r.TrimmedMeanUS, PeerUS: p.TrimmedMeanUS, Ratio: r.TrimmedMeanUS / p.TrimmedMeanUS, KernelGBps: r.GBps, PeerGBps: p.GBps})
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

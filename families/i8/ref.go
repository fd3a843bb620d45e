package i8

import (
	"math"
	"math/rand/v2"

	"github.com/parharness/parharness/families/gemm"
	"github.com/parharness/parharness/internal/par"
	"github.com/parharness/parharness/refimpl"
)

// The I8 GEMM's fp64 reference and its bound.
//
// Reference. From the same int8 codes a, group scales sa, int32 row sums
// rs, weight codes q, zeros z and fp16 scales s the kernel reads:
//
//	ref[m,n] = Σ_g sa[m,g]·s[g,n]·D_g,  D_g = Σ_{k in g} a[m,k]·q[k,n] − z[g,n]·rs[m,g]
//
// with D_g an exact integer, so ref is the exact product up to fp64's own
// rounding of the G terms (2^-53 relative each: far below the bound), and
// mag[m,n] = Σ_g |sa·s·D_g|, the magnitude of the terms the kernel adds.
// refGEMMCheck (the tests) ties it to refimpl.GEMMRef on the dequantized
// activations.
//
// Bound. D_g is exact in int32 and in float32 (|D_g| < 2^19). The kernel
// then rounds, per group, t_g = fl(s·D_g) (relative error <= u = 2^-24)
// and acc = fl(acc + sa·t_g) (one fma, one rounding); each split adds its
// groups so (at most G of them), the S partials are added in fp32, and the
// sum is rounded once to bf16. The classic bound on recursive summation
// (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., §4.2:
// |error| <= γ_{n-1}·Σ|terms| for n terms, γ_n = n·u/(1 − n·u)) gives, for
// the fp32 value v before the bf16 rounding,
//
//	|v − ref| <= E = (G + S + 2)·u·mag + (2G + S)·2^-149
//
// (u·mag for the products t_g, (G − 1 + S − 1)·u·mag for the additions,
// 2·u·mag of slack for γ's denominator and the second-order terms; the
// absolute term covers fp32 underflow, 2^-150 per rounding). One rounding
// to nearest bf16 then moves v by at most half a bf16 ulp of |v| <=
// |ref| + E (refimpl.BF16RoundBound):
//
//	|got − ref| <= ½·ulp(|ref| + E) + E.
//
// A second bf16 rounding, a dropped group or a wrong zero point does not
// fit: E is about 2^-18 of mag against bf16's 2^-9. The pooled and per-row
// norm checks (rel <= gemmTolFactor × the bf16 floor of ref) guard what
// the per-element bound cannot see in aggregate, as in the e4m3 gate
// (families/gemm: 1.000-1.006 × floor measured there for one rounding).

// gemmTolFactor is the pooled and per-row pass bound over the bf16 floor.
const gemmTolFactor = 1.15

// elemBound is how far one output element may be from its reference.
func elemBound(ref, mag float64, G, S int) float64 {
	e := float64(G+S+2)*0x1p-24*mag + float64(2*G+S)*0x1p-149
	return refimpl.BF16RoundBound(ref, e)
}

// gemmRef is the reference of one case on its subset: rows × cols, ref and
// mag row-major over the subset, the bf16 floor of ref.
type gemmRef struct {
	sel      refimpl.Subset
	ref, mag []float64
	floor    float64
	G        int
	splits   int // 1: the bound for a launch without split-K partials
	// elemExtra is added to each element's E (×mag): 0 for the I8 GEMM;
	// the e4m3 peer's fold has more roundings (e4m3Extra).
	elemExtra float64
}

func (r gemmRef) withSplits(S int) gemmRef { r.splits = S; return r }

func (r gemmRef) bound(ref, mag float64) float64 {
	if r.elemExtra == 0 {
		return elemBound(ref, mag, r.G, r.splits)
	}
	e := (float64(r.G+r.splits+2)*0x1p-24+r.elemExtra)*mag + float64(2*r.G+r.splits)*0x1p-149
	return refimpl.BF16RoundBound(ref, e)
}

// negated is the reference of negated activations (-ref, same magnitudes).
func (r gemmRef) negated() gemmRef {
	out := make([]float64, len(r.ref))
	for i, v := range r.ref {
		out[i] = -v
	}
	r.ref = out
	return r
}

// i8Activations are one partition set's int8 activations as the kernels
// read them, with the per-group quantization they came from.
type i8Activations struct {
	qs     []*refimpl.QuantAct // per partition, [M, K]
	codes  []byte              // [P, M, K] int8
	scales []float32           // [P, M, G]
	rsums  []int32             // [P, M, G]
}

func newI8Activations(xs [][]float32, M, K int) *i8Activations {
	a := &i8Activations{}
	for _, x := range xs {
		q := refimpl.QuantizeActGroupInt8(x, M, K)
		a.qs = append(a.qs, q)
		a.codes = append(a.codes, q.Codes...)
		a.scales = append(a.scales, q.GroupScale...)
		for _, r := range q.RowSums {
			a.rsums = append(a.rsums, int32(r))
		}
	}
	return a
}

// partitionOf is the partition of column n.
func partitionOf(parts []int, n int) int {
	for p, w := range parts {
		if n < w {
			return p
		}
		n -= w
	}
	return len(parts) - 1
}

// i8Reference computes ref and mag on sel (every row when sel.Rows is nil)
// for the codes of a (partition p's rows in a.qs[p], per-group or
// per-token scales) and the weight w. Per token, ref = As·Σ_g s·D_g, the
// same sum with As factored out.
func i8Reference(a *i8Activations, w *refimpl.QWeight, parts []int, M int, sel refimpl.Subset) gemmRef {
	K, N, G := w.K, w.N, w.K/refimpl.GroupSize
	rows, cols := sel.RowsOf(M), sel.ColsOf(N)
	ref := make([]float64, len(rows)*len(cols))
	mag := make([]float64, len(ref))
	par.For(len(cols), func(ci int) {
		n := cols[ci]
		p := partitionOf(parts, n)
		q := make([]int32, K)
		for k := range q {
			q[k] = int32(w.Code(k, n))
		}
		qa := a.qs[p]
		for ri, m := range rows {
			codes := qa.Codes[m*K : (m+1)*K]
			var y, mg float64
			for g := 0; g < G; g++ {
				var d int32
				for k := g * refimpl.GroupSize; k < (g+1)*refimpl.GroupSize; k++ {
					d += int32(int8(codes[k])) * q[k]
				}
				d -= int32(w.Zero(g, n)) * int32(qa.RowSums[m*G+g])
				t := qa.Scale(m, g*refimpl.GroupSize) * w.Scales[g*N+n] * float64(d)
				y += t
				mg += math.Abs(t)
			}
			ref[ri*len(cols)+ci], mag[ri*len(cols)+ci] = y, mg
		}
	})
	return gemmRef{sel: sel, ref: ref, mag: mag, floor: refimpl.Bf16Floor(ref), G: G, splits: 1}
}

// zeroFirstChannels returns w with channel 0 of every group at its zero
// point (dequantized weight 0): with the "smallcodes" activations, whose
// group maximum sits on channel 0, the output then comes only from codes of
// magnitude 0..3.
func zeroFirstChannels(w *refimpl.QWeight) *refimpl.QWeight {
	G := w.K / refimpl.GroupSize
	codes := refimpl.UnpackAWQ(w.QWeight, w.K, w.N)
	zeros := refimpl.UnpackAWQ(w.QZeros, G, w.N)
	for g := 0; g < G; g++ {
		k := g * refimpl.GroupSize
		copy(codes[k*w.N:(k+1)*w.N], zeros[g*w.N:(g+1)*w.N])
	}
	out := *w
	out.QWeight = refimpl.PackAWQ(codes, w.K, w.N)
	return &out
}

// GEMM activation distributions (float32 rows [M, K], "rotated").
//   - normal: log-normal row scale times N(0, 1);
//   - outlier: 1% of values x50;
//   - smallcodes: channel 0 of each group is its maximum and the others
//     are 0.2%..2.5% of it, so their codes are 0..±3 (the int8 analogue of
//     the e4m3 gate's subnormal-code case; with zeroFirstChannels weights);
//   - subnormal: whole rows in the float32 subnormal range (group scales
//     and row sums at the bottom of the range: a flush to zero shows);
//   - large: values near 2^100 (scales 2^93, outputs near 2^96).
var gemmDists = []string{"normal", "outlier", "smallcodes", "subnormal", "large"}

func gemmActivations(rng *rand.Rand, M, K int, dist string) []float32 {
	x := make([]float32, M*K)
	for m := 0; m < M; m++ {
		rs := math.Exp(rng.NormFloat64())
		for k := 0; k < K; k++ {
			v := rng.NormFloat64() * rs
			switch dist {
			case "outlier":
				if rng.IntN(100) == 0 {
					v *= 50
				}
			case "smallcodes":
				if k%refimpl.GroupSize == 0 {
					v = rs * float64(1-2*rng.IntN(2))
				} else {
					v = rs * (2e-3 + 2.3e-2*rng.Float64()) * float64(1-2*rng.IntN(2))
				}
			case "subnormal":
				v *= 1e-40
			case "large":
				v *= 0x1p100
			}
			x[m*K+k] = float32(v)
		}
	}
	return x
}

// gemmSubset is the part of a case's output the reference computes: every
// row (M <= 64); every column while M·N·K <= 2e8, else one column in each
// of max(1024, N/16) strata, one in every 16-column slab and each
// partition's first and last column.
func gemmSubset(s gemm.GemmShape, M int, seed uint64) refimpl.Subset {
	N := s.N()
	if float64(M)*float64(N)*float64(s.K) <= 2e8 {
		return refimpl.Subset{}
	}
	sel := refimpl.RandomSubset(M, N, 0, max(1024, N/16), seed^0x5eed)
	edges, start := []int{}, 0
	for _, w := range s.Parts {
		edges = append(edges, start, start+w-1)
		start += w
	}
	sel.Cols = refimpl.Union(sel.Cols, refimpl.TileIndices(N, 16, seed^0x7112), edges)
	return sel
}

// newI8TokenActivations quantizes rows per token (refimpl.QuantizeActTokenInt8)
// and lays the codes out fragment-tiled [P, Mpad, K], as pq_i8_tokq's tiled
// output; scales holds the token scales [P, M].
func newI8TokenActivations(xs [][]float32, M, K int) *i8Activations {
	a := &i8Activations{}
	for _, x := range xs {
		q := refimpl.QuantizeActTokenInt8(x, M, K)
		a.qs = append(a.qs, q)
		a.codes = append(a.codes, refimpl.TileRows(q.Codes, M, K)...)
		a.scales = append(a.scales, q.TokenScale...)
		for _, r := range q.RowSums {
			a.rsums = append(a.rsums, int32(r))
		}
	}
	return a
}

// preSubset is a prefill case's checked part: every row up to M = 64, else
// one row in each of 64 strata and one in every 16-row slab; columns as
// gemmSubset.
func preSubset(s gemm.GemmShape, M int, seed uint64) refimpl.Subset {
	sel := gemmSubset(s, min(M, 64), seed)
	if M > 64 {
		rs := refimpl.RandomSubset(M, s.N(), 64, 0, seed^0x5eee)
		sel.Rows = refimpl.Union(rs.Rows, refimpl.TileIndices(M, 16, seed^0x7111))
	}
	return sel
}

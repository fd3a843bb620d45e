package normrot

import (
	"math"
	"math/rand/v2"

	"github.com/parharness/parharness/families/producers"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/internal/par"
	"github.com/parharness/parharness/refimpl"
)

// The Go mirror: what every normrot kernel must write, as bytes.
//
// AddNormRow is the residual add and Gemma RMSNorm in the kernels' fp32 op
// order (normrot.hip's file comment): residual' = bf16(x + residual); the
// sum of squares per 128-group as 32 lane chains (c0*c0, then fma of
// c1, c2, c3) combined by the xor butterfly, the group sums added in group
// order from 0; var = sum / K; rs = 1 / sqrt(var + eps) (two correctly
// rounded ops); hs = bf16((r * rs) * (1 + w)). Every float32 operation
// is written with an explicit conversion so the Go compiler cannot fuse
// it (the Go spec allows fusing x*y + z otherwise). The producer part is
// refimpl's (RotRecords.RotateF32Into, QuantizeActGroup/Token).

// AddNormRow computes one row: residual' into rOut and hs into hs (each
// K long) from x, res (bf16 rows) and w (bf16 weight).
func AddNormRow(x, res, w []uint16, eps float32, rOut, hs []uint16) {
	K := len(x)
	for k := range x {
		rOut[k] = refimpl.F32ToBF16(float32(refimpl.BF16ToF32(x[k]) + refimpl.BF16ToF32(res[k])))
	}
	rs := RowRsqrt(rOut, eps)
	for k := 0; k < K; k++ {
		n := float32(refimpl.BF16ToF32(rOut[k]) * rs)
		hs[k] = refimpl.F32ToBF16(float32(n * float32(1+refimpl.BF16ToF32(w[k]))))
	}
}

// GroupSumSq is the sum of squares of one 128-group of bf16 values in the
// kernels' order: lane chains, then the xor butterfly.
func GroupSumSq(r []uint16) float32 {
	var lanes [32]float32
	for l := range lanes {
		c := func(i int) float32 { return refimpl.BF16ToF32(r[4*l+i]) }
		s := float32(c(0) * c(0))
		for i := 1; i < 4; i++ {
			s = refimpl.FMA32(c(i), c(i), s)
		}
		lanes[l] = s
	}
	for m := 16; m > 0; m >>= 1 {
		var next [32]float32
		for l := range lanes {
			next[l] = float32(lanes[l] + lanes[l^m])
		}
		lanes = next
	}
	return lanes[0]
}

// RowRsqrt is rs of a residual' row: 1 / sqrt(sum / K + eps) in the
// kernels' order.
func RowRsqrt(r []uint16, eps float32) float32 {
	K := len(r)
	var tot float32
	for g := 0; g < K/Group; g++ {
		tot = float32(tot + GroupSumSq(r[g*Group:(g+1)*Group]))
	}
	v := float32(float32(tot/float32(K)) + eps)
	return float32(1 / float32(math.Sqrt(float64(v))))
}

// AddNormRows is AddNormRow over M rows of K, on every CPU.
func AddNormRows(x, res, w []uint16, M, K int, eps float32) (hs, rOut []uint16) {
	hs, rOut = make([]uint16, M*K), make([]uint16, M*K)
	par.For(M, func(m int) {
		s := m * K
		AddNormRow(x[s:s+K], res[s:s+K], w, eps, rOut[s:s+K], hs[s:s+K])
	})
	return hs, rOut
}

// AddNorm64 is the fp64 semantic reference of one row: the residual sum
// rounded once to bf16 (exact: what residual' must be), and hs before its
// bf16 rounding, from the exact rms of that residual' row.
func AddNorm64(x, res, w []uint16, eps float32) (rOut []uint16, hs []float64) {
	K := len(x)
	rOut, hs = make([]uint16, K), make([]float64, K)
	var ss float64
	for k := range x {
		rOut[k] = refimpl.F64ToBF16(refimpl.BF16ToF64(x[k]) + refimpl.BF16ToF64(res[k]))
		v := refimpl.BF16ToF64(rOut[k])
		ss += v * v
	}
	rs := 1 / math.Sqrt(ss/float64(K)+float64(eps))
	for k := range hs {
		hs[k] = refimpl.BF16ToF64(rOut[k]) * rs * (1 + refimpl.BF16ToF64(w[k]))
	}
	return rOut, hs
}

// HSRelErr bounds the fp32 path's relative error on hs before its bf16
// rounding, in units of u = 2^-24, for G groups: the sum of squares of
// non-negative terms has at most 3 (lane chain) + 5 (butterfly) + G
// (group order) roundings on its path, each at most u of the running sum,
// so a relative error <= (G + 8)u; the division by K and the + eps add
// one each ((G + 10)u on var); sqrt halves it and adds u, the division
// 1/s adds u: rs is within ((G + 10)/2 + 2)u; then r*rs, 1 + w and the
// product add u each (1 + w relative to itself), (G + 10)/2 + 5 in all.
// Every value here is far above the fp32 subnormal range except a zero
// row, where everything is exactly 0.
func HSRelErr(G int) float64 { return (float64(G+10)/2 + 5) * 0x1p-24 }

// Input distributions: realistic rows (x the layer output, residual the
// stream, larger), outliers (1% of x times 1000), and cancellation
// (residual = -x on a third of the elements and on every element of the
// first row: residual' exactly zero there, a zero row's rms is
// sqrt(eps), and its hs, codes and scales are all zero).
var dists = []string{"normal", "outlier", "cancel"}

// randomInputs draws x, residual [M,K] and the norm weight [K]. Row m
// draws from its own stream, so rows are drawn in parallel.
func randomInputs(seed uint64, M, K int, dist string) (x, res, w []uint16) {
	x, res, w = make([]uint16, M*K), make([]uint16, M*K), make([]uint16, K)
	wr := rand.New(rand.NewPCG(seed, 1<<40))
	for k := range w {
		// Gemma weights sit around 0 (the norm scales by 1 + w).
		w[k] = refimpl.F64ToBF16(wr.NormFloat64() * 0.25)
	}
	par.For(M, func(m int) {
		r := rand.New(rand.NewPCG(seed, uint64(m)))
		xs, rsc := math.Exp(r.NormFloat64()), 4*math.Exp(r.NormFloat64())
		for k := 0; k < K; k++ {
			a, b := r.NormFloat64()*xs, r.NormFloat64()*rsc
			switch dist {
			case "outlier":
				if r.IntN(100) == 0 {
					a *= 1000
				}
			case "cancel":
				if m == 0 || r.IntN(3) == 0 {
					b = -refimpl.BF16ToF64(refimpl.F64ToBF16(a))
				}
			}
			x[m*K+k], res[m*K+k] = refimpl.F64ToBF16(a), refimpl.F64ToBF16(b)
		}
	})
	return x, res, w
}

// want is what the kernels of one case must write, as device bytes
// (partition major), each output followed by rowsPastM rows of poison
// the kernels must leave alone (the gate compares whole downloads).
type want struct {
	hs, res []byte // [M,K] bf16
	hsRows  []uint16
	producers.ChainWant
}

// buildWant computes a case's mirror: the norm rows, then the producers'
// chain on hs per partition (per-group only when withGroup).
func buildWant(rr *refimpl.RotRecords, x, res, w []uint16, M, K, P int, withGroup bool) want {
	hs, rOut := AddNormRows(x, res, w, M, K, Eps)
	return want{hs: gates.U16Bytes(hs), res: gates.U16Bytes(rOut), hsRows: hs, ChainWant: producers.BuildChainWant(rr, hs, M, K, P, withGroup)}
}

package normrot

import (
	"math"
	"math/big"
	"testing"

	"github.com/parharness/parharness/families/producers"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/refimpl"
)

// f32 is one fp32 rounding done by math/big: the exact result of an op
// rounded to 24 bits, nearest even (the values here are normal floats, so
// the exponent range never matters).
type f32 struct{ v *big.Float }

func newF(x float32) f32 {
	return f32{new(big.Float).SetPrec(24).SetMode(big.ToNearestEven).SetFloat64(float64(x))}
}
func (a f32) r() *big.Float {
	return new(big.Float).SetPrec(24).SetMode(big.ToNearestEven)
}
func (a f32) add(b f32) f32 { return f32{a.r().Add(a.v, b.v)} }
func (a f32) mul(b f32) f32 { return f32{a.r().Mul(a.v, b.v)} }
func (a f32) quo(b f32) f32 { return f32{a.r().Quo(a.v, b.v)} }
func (a f32) sqrt() f32     { return f32{a.r().Sqrt(a.v)} }

// fma rounds a*b + c once: the product exact (48 bits), the sum rounded.
func fma(a, b, c f32) f32 {
	p := new(big.Float).SetPrec(48).Mul(a.v, b.v)
	return f32{c.r().Add(p, c.v)}
}
func (a f32) float() float32 { f, _ := a.v.Float32(); return f }

// emulateRow is an independent fp32 emulation of one row of the kernels'
// norm, written from normrot.hip's code: block nw warps, warp w taking
// groups w, w+nw, ...; every op rounded by math/big; the butterfly done
// lane by lane as the shuffles exchange values.
func emulateRow(x, res, w []uint16, eps float32, nw int) (rOut, hs []uint16) {
	K := len(x)
	G := K / 128
	rOut, hs = make([]uint16, K), make([]uint16, K)
	spart := make([]f32, G)
	bf := func(h uint16) f32 { return newF(math.Float32frombits(uint32(h) << 16)) }
	for warp := 0; warp < nw; warp++ {
		for g := warp; g < G; g += nw {
			var lanes [32]f32
			for l := 0; l < 32; l++ {
				var c [4]f32
				for i := 0; i < 4; i++ {
					k := g*128 + 4*l + i
					rOut[k] = refimpl.F32ToBF16(bf(x[k]).add(bf(res[k])).float())
					c[i] = bf(rOut[k])
				}
				s := c[0].mul(c[0])
				s = fma(c[1], c[1], s)
				s = fma(c[2], c[2], s)
				lanes[l] = fma(c[3], c[3], s)
			}
			for m := 16; m > 0; m >>= 1 {
				var next [32]f32
				for l := range lanes {
					next[l] = lanes[l].add(lanes[l^m])
				}
				lanes = next
			}
			spart[g] = lanes[0]
		}
	}
	tot := newF(0)
	for g := 0; g < G; g++ {
		tot = tot.add(spart[g])
	}
	rs := newF(1).quo(tot.quo(newF(float32(K))).add(newF(eps)).sqrt())
	for k := range hs {
		hs[k] = refimpl.F32ToBF16(bf(rOut[k]).mul(rs).mul(newF(1).add(bf(w[k]))).float())
	}
	return rOut, hs
}

// The mirror equals the independent emulation on every distribution,
// whatever the block's warp count (the order does not depend on it).
func TestMirrorEqualsEmulation(t *testing.T) {
	for _, dist := range dists {
		t.Run(dist, func(t *testing.T) {
			const M, K = 3, 1408 // 11 groups: an odd count, uneven over the warps
			x, res, w := randomInputs(7, M, K, dist)
			hs, rOut := AddNormRows(x, res, w, M, K, Eps)
			for _, nw := range []int{8, 16, 32} {
				for m := 0; m < M; m++ {
					er, eh := emulateRow(x[m*K:(m+1)*K], res[m*K:(m+1)*K], w, Eps, nw)
					for k := 0; k < K; k++ {
						if er[k] != rOut[m*K+k] || eh[k] != hs[m*K+k] {
							t.Fatalf("nw=%d m=%d k=%d: mirror (res %#04x, hs %#04x), emulation (%#04x, %#04x)", nw, m, k, rOut[m*K+k], hs[m*K+k], er[k], eh[k])
						}
					}
				}
			}
		})
	}
}

// A zero row (the cancel distribution's row 0) has rs = 1/sqrt(eps) and
// hs, codes and scales zero.
func TestZeroRow(t *testing.T) {
	x, res, w := randomInputs(3, 2, 256, "cancel")
	hs, rOut := AddNormRows(x, res, w, 2, 256, Eps)
	for k := 0; k < 256; k++ {
		if rOut[k]&0x7FFF != 0 || hs[k]&0x7FFF != 0 {
			t.Fatalf("k=%d: residual' %#04x hs %#04x, want zeros", k, rOut[k], hs[k])
		}
	}
}

// plantedRow is the norm with one rounding point wrong, for the gate's
// compare to catch.
func plantedRow(x, res, w []uint16, bug string) (rOut, hs []uint16) {
	K := len(x)
	rOut, hs = make([]uint16, K), make([]uint16, K)
	r := make([]float32, K)
	for k := range x {
		r[k] = refimpl.BF16ToF32(x[k]) + refimpl.BF16ToF32(res[k])
		rOut[k] = refimpl.F32ToBF16(r[k])
		if bug != "residual-not-rounded" {
			r[k] = refimpl.BF16ToF32(rOut[k])
		}
	}
	var ss float64
	for _, v := range r {
		ss += float64(v) * float64(v)
	}
	// The kernels' fp32 sum order, or (the planted bug) the sum and the
	// rsqrt in fp64, rounded once.
	rs := RowRsqrt(rOut, Eps)
	if bug == "sum-in-fp64" {
		rs = float32(1 / math.Sqrt(ss/float64(K)+float64(Eps)))
	}
	for k := range hs {
		n := float32(r[k] * rs)
		if bug == "weight-after-rounding" {
			hs[k] = refimpl.F32ToBF16(float32(refimpl.BF16ToF32(refimpl.F32ToBF16(n)) * float32(1+refimpl.BF16ToF32(w[k]))))
		} else {
			hs[k] = refimpl.F32ToBF16(float32(n * float32(1+refimpl.BF16ToF32(w[k]))))
		}
	}
	return rOut, hs
}

// The gate's compare fails a kernel with a wrong rounding point: residual'
// not rounded to bf16 before the norm, the weight applied after hs is
// rounded (Llama's order, not Gemma's), the sum of squares in another
// precision (rs off by an fp32 ulp or so moves hs across a bf16 rounding
// boundary about once in 2^16 elements: 64 rows of 5120 have a few).
func TestCompareCatchesWrongRoundingPoints(t *testing.T) {
	const M, K, P = 64, 5120, 1
	x, res, w := randomInputs(11, M, K, "normal")
	hs, rOut := AddNormRows(x, res, w, M, K, Eps)
	wnt := want{hs: gates.U16Bytes(hs), res: gates.U16Bytes(rOut), ChainWant: producers.ChainWant{GroupCodes: []byte{}, GroupScales: []byte{}, GroupRSums: []byte{}}}
	poison := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = 0xFF
		}
		return b
	}
	for _, bug := range []string{"none", "residual-not-rounded", "weight-after-rounding", "sum-in-fp64"} {
		t.Run(bug, func(t *testing.T) {
			gh, gr := make([]uint16, M*K), make([]uint16, M*K)
			for m := 0; m < M; m++ {
				r, h := plantedRow(x[m*K:(m+1)*K], res[m*K:(m+1)*K], w, bug)
				copy(gr[m*K:], r)
				copy(gh[m*K:], h)
			}
			got := outputs{hs: append(gates.U16Bytes(gh), poison(2*K)...), res: append(gates.U16Bytes(gr), poison(2*K)...),
				codes: poison(16), scale: poison(16), rsum: poison(16)}
			var f gates.Findings
			checkOp(&f, bug, OpNorm, false, M, K, P, wnt, got)
			if (f.Err() != nil) != (bug != "none") {
				t.Errorf("bug %s: compare says %v", bug, f.Err())
			}
		})
	}
}

package i8

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/parharness/parharness/families/gemm"
	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/refimpl"
)

var refShape = gemm.GemmShape{K: 640, Parts: []int{128, 64}}

func refCase(t *testing.T, dist string, M int) (*refimpl.QWeight, *i8Activations, gemmRef) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, uint64(M)))
	w := gemm.GateWeights(rng, refShape.K, refShape.N())
	if dist == "smallcodes" {
		w = zeroFirstChannels(w)
	}
	xs := [][]float32{gemmActivations(rng, M, refShape.K, dist), gemmActivations(rng, M, refShape.K, dist)}
	a := newI8Activations(xs, M, refShape.K)
	return w, a, i8Reference(a, w, refShape.Parts, M, refimpl.Subset{})
}

// The integer-form reference equals refimpl.GEMMRef (the W4A8 reference
// on dequantized activations and weights) to fp64 accuracy.
func TestReferenceMatchesGEMMRef(t *testing.T) {
	for _, dist := range gemmDists {
		t.Run(dist, func(t *testing.T) {
			M, K := 5, refShape.K
			w, a, rr := refCase(t, dist, M)
			deq := make([]float64, 0, 2*M*K)
			for _, q := range a.qs {
				deq = append(deq, q.Dequant()...)
			}
			ref := refimpl.GEMMRef(deq, M, w, refShape.Parts, refimpl.Subset{})
			for i, v := range ref {
				if d := math.Abs(v - rr.ref[i]); d > 1e-12*rr.mag[i]+1e-300 {
					t.Fatalf("element %d: GEMMRef %g, integer form %g (mag %g)", i, v, rr.ref[i], rr.mag[i])
				}
			}
		})
	}
}

// fold is a kernel's per-group fold as a test plants it.
type fold func(acc float32, d int32, sa, s float32, z, rs int32) float32

var kernelFold fold = func(acc float32, d int32, sa, s float32, z, rs int32) float32 {
	return refimpl.FMA32(sa, s*float32(d-z*rs), acc)
}

// emulateGEMM is the I8 kernel in Go, op for op in fp32 (i8gemm.hip's
// header): per split the groups folded in order, the partials summed in
// split order, one bf16 rounding; rows past M poisoned.
func emulateGEMM(w *refimpl.QWeight, a *i8Activations, parts []int, M, S int, f fold) []byte {
	K, N, G := w.K, w.N, w.K/refimpl.GroupSize
	out := make([]byte, 2*(M+gemmRowsPast)*N)
	for i := 2 * M * N; i < len(out); i++ {
		out[i] = 0xFF
	}
	gps := (G + S - 1) / S
	for n := 0; n < N; n++ {
		q := a.qs[partitionOf(parts, n)]
		for m := 0; m < M; m++ {
			var sum float32
			for s := 0; s < S; s++ {
				var acc float32
				for g := s * gps; g < min(G, (s+1)*gps); g++ {
					var d int32
					for k := g * 128; k < (g+1)*128; k++ {
						d += int32(int8(q.Codes[m*K+k])) * int32(w.Code(k, n))
					}
					acc = f(acc, d, q.GroupScale[m*G+g], float32(w.Scales[g*N+n]), int32(w.Zero(g, n)), int32(q.RowSums[m*G+g]))
				}
				sum += acc
			}
			b := refimpl.F32ToBF16(sum)
			out[2*(m*N+n)], out[2*(m*N+n)+1] = byte(b), byte(b>>8)
		}
	}
	return out
}

// The gate's check passes the kernel's fp32 arithmetic on every
// distribution and split, and fails a second bf16 rounding (of each
// group's term), a zero point taken as z − 8, a dropped last group, an
// unwritten element and a write past row M.
func TestGEMMCheckAcceptsKernelRejectsBugs(t *testing.T) {
	bugs := map[string]fold{
		"double rounding": func(acc float32, d int32, sa, s float32, z, rs int32) float32 {
			return refimpl.FMA32(sa, refimpl.BF16ToF32(refimpl.F32ToBF16(s*float32(d-z*rs))), acc)
		},
		"zero point z-8": func(acc float32, d int32, sa, s float32, z, rs int32) float32 {
			return refimpl.FMA32(sa, s*float32(d-(z-8)*rs), acc)
		},
	}
	for _, dist := range gemmDists {
		M := 9
		w, a, rr := refCase(t, dist, M)
		N := refShape.N()
		for _, S := range []int{1, 3} {
			check := func(got []byte) error {
				var f gates.Findings
				checkGEMMOut(&f, dist, gates.Case{}, got, M, N, rr.withSplits(S))
				return f.Err()
			}
			t.Run(dist+"/kernel", func(t *testing.T) {
				if err := check(emulateGEMM(w, a, refShape.Parts, M, S, kernelFold)); err != nil {
					t.Errorf("S=%d: %v", S, err)
				}
			})
			for name, bug := range bugs {
				if dist == "subnormal" && name == "double rounding" {
					continue // outputs are bf16 subnormals: a bf16 rounding of each term is below their half ulp
				}
				t.Run(dist+"/"+name, func(t *testing.T) {
					if check(emulateGEMM(w, a, refShape.Parts, M, S, bug)) == nil {
						t.Errorf("S=%d: a kernel with %s passes", S, name)
					}
				})
			}
			t.Run(dist+"/corrupt", func(t *testing.T) {
				good := emulateGEMM(w, a, refShape.Parts, M, S, kernelFold)
				unwritten := append([]byte{}, good...)
				unwritten[2*(3*N+70)], unwritten[2*(3*N+70)+1] = 0xFF, 0xFF
				past := append([]byte{}, good...)
				past[2*M*N+6] = 0
				for what, got := range map[string][]byte{"unwritten element": unwritten, "write past M": past} {
					if check(got) == nil {
						t.Errorf("S=%d: %s passes", S, what)
					}
				}
			})
		}
	}
	// A dropped group (the last split's last group) on normal activations.
	M := 4
	w, a, rr := refCase(t, "normal", M)
	a2 := *a
	a2.qs = nil
	for _, q := range a.qs {
		c := *q
		c.GroupScale = append([]float32{}, q.GroupScale...)
		for m := 0; m < M; m++ {
			c.GroupScale[m*5+4] = 0
		}
		a2.qs = append(a2.qs, &c)
	}
	var f gates.Findings
	checkGEMMOut(&f, "dropped group", gates.Case{}, emulateGEMM(w, &a2, refShape.Parts, M, 1, kernelFold), M, refShape.N(), rr)
	if f.Err() == nil {
		t.Error("a kernel that drops the last group passes")
	}
}

// The prefill check (elemBound at S = 2) passes the prefill kernel's fp32
// arithmetic (one fma per group, then As·acc, one bf16 rounding) on every
// distribution, and fails it with As applied per group after a bf16
// rounding of each term.
func TestPrefillCheckAcceptsKernel(t *testing.T) {
	shape := gemm.GemmShape{K: 384, Parts: []int{128, 128}}
	for _, dist := range gemmDists {
		t.Run(dist, func(t *testing.T) {
			const M = 21
			rng := rand.New(rand.NewPCG(11, 12))
			w := gemm.GateWeights(rng, shape.K, shape.N())
			xs := [][]float32{gemmActivations(rng, M, shape.K, dist), gemmActivations(rng, M, shape.K, dist)}
			a := newI8TokenActivations(xs, M, shape.K)
			rr := i8Reference(a, w, shape.Parts, M, refimpl.Subset{}).withSplits(2)
			K, N, G := shape.K, shape.N(), shape.K/128
			emulate := func(bug bool) []byte {
				out := make([]byte, 2*(M+gemmRowsPast)*N)
				for i := 2 * M * N; i < len(out); i++ {
					out[i] = 0xFF
				}
				for n := 0; n < N; n++ {
					q := a.qs[partitionOf(shape.Parts, n)]
					for m := 0; m < M; m++ {
						var acc float32
						for g := 0; g < G; g++ {
							var d int32
							for k := g * 128; k < (g+1)*128; k++ {
								d += int32(int8(q.Codes[m*K+k])) * int32(w.Code(k, n))
							}
							d -= int32(w.Zero(g, n)) * int32(q.RowSums[m*G+g])
							term := float32(float64(d))
							if bug {
								acc += refimpl.BF16ToF32(refimpl.F32ToBF16(q.TokenScale[m] * float32(w.Scales[g*N+n]) * term))
							} else {
								acc = refimpl.FMA32(float32(w.Scales[g*N+n]), term, acc)
							}
						}
						y := acc
						if !bug {
							y = q.TokenScale[m] * acc
						}
						b := refimpl.F32ToBF16(y)
						out[2*(m*N+n)], out[2*(m*N+n)+1] = byte(b), byte(b>>8)
					}
				}
				return out
			}
			var f gates.Findings
			checkGEMMOut(&f, dist, gates.Case{}, emulate(false), M, N, rr)
			if err := f.Err(); err != nil {
				t.Errorf("the prefill kernel's arithmetic fails: %v", err)
			}
			if dist == "subnormal" {
				return
			}
			var fb gates.Findings
			checkGEMMOut(&fb, dist, gates.Case{}, emulate(true), M, N, rr)
			if fb.Err() == nil {
				t.Error("a per-group bf16 rounding passes")
			}
		})
	}
}

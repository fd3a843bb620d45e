package ewrot

import (
	"math"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/refimpl"
	"github.com/parharness/parharness/shapes"
)

// ewrot-semantics: the mirror (which the device equals byte for byte)
// against fp64. (1) Each bf16 op output within OpBound of the fp64 op
// (refimpl.SiLUMul, SigmoidGate, GatedRMSNorm on the same bf16 inputs).
// (2) Each code x scale within the producers' e4m3 bound (semanticsTol,
// the bound of families/producers' semantics gate) of the exact rotation
// (refimpl.Rotation.Forward) of the fp64 op output, the op's own error
// carried through the channel scales and the orthogonal rotation.

func init() {
	gates.Register(gates.Gate{Family: Family, Name: "ewrot-semantics", Suites: gates.Quick | gates.Full, Run: gateSemantics,
		Proves: "the ewrot mirror's bf16 op outputs are within their derived rounding bound of the fp64 op (silu-mul, sigmoid gate, gated RMSNorm), and its codes x scales within the producers' e4m3 bound of the exactly rotated fp64 op output"})
}

const (
	u32f = 0x1p-24 // float32 unit roundoff
	// ExpUlps bounds ExpF32's error in float32 ulps of the result on the
	// normal range (TestExpF32Accuracy measures it over a dense sweep).
	ExpUlps = 2
	// tiny32 is the float32 subnormal step: the absolute error of one
	// rounding whose result is subnormal.
	tiny32 = 0x1p-149
)

// sigmoidErr bounds |SigmoidF32(v) - σ(v)|: ExpF32 is within ExpUlps ulps
// (2^-23 relative each) of e^-v, which moves 1 + e by at most that
// relative amount; the sum and the reciprocal round once each (2u). Where
// e^-v overflows float32 (-v > ln(MaxFloat32)) the sum is +Inf and the
// result is 0: the error is σ itself. A subnormal result adds one step.
func sigmoidErr(v float64) float64 {
	s := refimpl.Sigmoid(v)
	e := s*(ExpUlps*0x1p-23+2*u32f)*(1+1e-6) + tiny32
	if -v >= math.Log(math.MaxFloat32) {
		e += s
	}
	return e
}

// OpBound bounds |bf16 op output - fp64 op| for one element (a, b, w the
// element's operands; r the exact 1/rms of its head and vr the bound on
// the float32 r's relative error, gated norm only).
//
//   - silu-mul: silu = a·σ̂ rounds once (u): |silu32 - silu| <= |a|·sigmoidErr
//   - u·|silu| + tiny; bf16(silu) adds half a bf16 ulp (BF16RoundBound);
//     the product with u (two bf16 significands: exact in float32 unless
//     it underflows, one tiny step) carries |u| times that; the final bf16
//     rounding adds half an ulp of the result.
//   - sigmoid-gate: bf16(σ̂) within BF16RoundBound(σ, sigmoidErr), times
//     |x|, then the final rounding.
//   - gated-norm: y = ((x·r)·w)·(z·σ̂(z)) in float32: r off by vr relative,
//     four rounded products (4u), z·σ̂ off by |z|·sigmoidErr; subnormal
//     intermediates add a tiny step each, amplified by the later factors;
//     then one bf16 rounding.
func OpBound(mode Mode, a, b, w, r, vr float64) float64 {
	switch mode {
	case SiluMul:
		silu := refimpl.SiLU(a)
		e1 := math.Abs(a)*sigmoidErr(a) + u32f*math.Abs(silu) + tiny32
		eb := refimpl.BF16RoundBound(silu, e1)
		return refimpl.BF16RoundBound(silu*b, math.Abs(b)*eb+tiny32)
	case SigmoidGate:
		eb := refimpl.BF16RoundBound(refimpl.Sigmoid(b), sigmoidErr(b))
		return refimpl.BF16RoundBound(a*refimpl.Sigmoid(b), math.Abs(a)*eb+tiny32)
	default:
		sz := refimpl.SiLU(b)
		esz := math.Abs(b)*sigmoidErr(b) + u32f*math.Abs(sz) + tiny32
		xr := a * r
		y := xr * w * sz
		rel := (vr + 4*u32f) * (1 + 1e-6)
		e := math.Abs(y)*rel + math.Abs(xr*w)*esz + tiny32*(1+math.Abs(w))*(1+math.Abs(sz)+esz) + tiny32
		return refimpl.BF16RoundBound(y, e)
	}
}

// headRstdErr is the exact 1/rms of one head's values and the bound on the
// float32 r's relative error: the sum of D squares in a tree of depth
// n = 3 + 5 + D/128 (lane, butterfly, groups) is within (n+1)u of the
// exact sum S (all terms positive; the squares round too), plus a tiny
// step per op where squares underflow; /D and +eps round once each; sqrt
// halves the relative error and rounds; the reciprocal rounds.
func headRstdErr(xs []float64, eps float64) (r, rel float64) {
	var S float64
	for _, v := range xs {
		S += v * v
	}
	D := float64(len(xs))
	V := S/D + eps
	n := 8 + D/128
	eV := ((n+1)*u32f*S/D+(n+D)*tiny32)/V + 2*u32f
	return 1 / math.Sqrt(V), eV/2 + 2*u32f
}

// CheckOpRows checks bf16 op rows y against fp64 within OpBound and
// returns the worst |error| / bound.
func CheckOpRows(r gates.Reporter, label string, p Params, in OpInputs, y []uint16, M, K int) float64 {
	ref := OpRows64(p, in, M, K)
	cols := p.Mode.InputCols(K)
	worst, bad := 0.0, 0
	for m := 0; m < M; m++ {
		var rs, vr float64
		for k := 0; k < K; k++ {
			a := refimpl.BF16ToF64(in.A[m*cols+k])
			var b, w float64
			switch p.Mode {
			case SiluMul:
				b = refimpl.BF16ToF64(in.A[m*cols+K+k])
			default:
				b = refimpl.BF16ToF64(in.B[m*K+k])
			}
			if p.Mode == GatedNorm {
				if k%p.D == 0 {
					xs := make([]float64, p.D)
					for i := range xs {
						xs[i] = refimpl.BF16ToF64(in.A[m*cols+k+i])
					}
					rs, vr = headRstdErr(xs, float64(p.Eps))
				}
				w = refimpl.BF16ToF64(in.W[k%p.D])
			}
			tol := OpBound(p.Mode, a, b, w, rs, vr)
			got, want := refimpl.BF16ToF64(y[m*K+k]), ref[m*K+k]
			d := math.Abs(got - want)
			if d > tol || math.IsNaN(got) {
				if bad < 3 {
					r.Failf("%s m=%d k=%d: bf16 output %g vs fp64 %g (a=%g b=%g w=%g), |diff| %g > bound %g", label, m, k, got, want, a, b, w, d, tol)
				}
				bad++
			} else if tol > 0 {
				worst = math.Max(worst, d/tol)
			}
		}
	}
	if bad > 3 {
		r.Failf("%s: %d outputs past the bound in all", label, bad)
	}
	return worst
}

// semanticsTol is families/producers' e4m3 bound (its gate.go documents
// the derivation): |code x scale - y| for an exact rotated value of size
// ay whose float32 rotation is within rot, with scale s, through a bf16
// rounding first when viaBF16 (the per-token path).
func semanticsTol(ay, s, rot float64, viaBF16 bool) float64 {
	a := ay + rot
	var bf float64
	if viaBF16 {
		bf = math.Ldexp(a, -8) + math.Ldexp(1, -134)
		a += bf
	}
	return (1+math.Ldexp(1, -20))*math.Max(math.Ldexp(a, -4), math.Ldexp(s, -10)) + bf + rot
}

// CheckCodes checks one prepared case's quantized outputs (per group and
// per token) against the exact rotation of the fp64 op; it returns the
// worst |error| / bound.
func CheckCodes(r gates.Reporter, label string, pc *Prepared) float64 {
	c := pc.Case
	K, M, G := c.K, c.M, c.K/refimpl.GroupSize
	ref := OpRows64(c.Params, pc.In, M, K)
	y := OpRows(c.Params, pc.In, M, K)
	worst := 0.0
	for p := 0; p < c.P; p++ {
		v := pc.RR.RotateF32(y, M, p)
		gq := refimpl.QuantizeActGroup(v, M, K)
		_, f := refimpl.RoundRowsBF16(v)
		tq := refimpl.QuantizeActToken(f, M, K)
		chs := pc.RR.ChS[p*K : (p+1)*K]
		for m := 0; m < M; m++ {
			exact := append([]float64{}, ref[m*K:(m+1)*K]...)
			pc.Rots[p].Forward(exact)
			for g := 0; g < G; g++ {
				var norm, opErr float64
				for k := g * 128; k < (g+1)*128; k++ {
					norm += exact[k] * exact[k]
					// The op's bf16 error per channel, bounded by how far
					// the bf16 output is from fp64 (CheckOpRows bounds that
					// separately), times the channel scale.
					e := (refimpl.BF16ToF64(y[m*K+k]) - ref[m*K+k]) * float64(chs[k])
					opErr += e * e
				}
				// The producers' float32 rotation bound (2e-6 relative, 2e-43
				// absolute; producers/gate.go derives it) plus the op's error
				// vector, which the orthogonal rotation keeps in norm.
				rot := 2e-6*(math.Sqrt(norm)+math.Sqrt(opErr)) + 2e-43 + math.Sqrt(opErr)*(1+1e-6)
				for mode, q := range []*refimpl.QuantAct{gq, tq} {
					for k := g * 128; k < (g+1)*128; k++ {
						s := q.Scale(m, k)
						got := q.CodeValue(m, k) * s
						tol := semanticsTol(math.Abs(exact[k]), s, rot, mode == 1)
						if d := math.Abs(got - exact[k]); d > tol || math.IsNaN(got) {
							r.Failf("%s p=%d m=%d k=%d %s: code x scale %g vs exact %g, |diff| %g > tol %g", label, p, m, k, []string{"per-group", "per-token"}[mode], got, exact[k], d, tol)
							return worst
						} else if tol > 0 {
							worst = math.Max(worst, d/tol)
						}
					}
				}
			}
		}
	}
	return worst
}

func gateSemantics(t *gates.T) {
	for i, c := range []Case{
		newCase(SiluMul, kp(8704, 1), 4, "normal"), newCase(SiluMul, kp(640, 1), 6, "edge"), newCase(SiluMul, kp(384, 3), 3, "subnormal"),
		newCase(SigmoidGate, kp(3072, 1), 4, "normal"), newCase(SigmoidGate, kp(640, 1), 6, "edge"), newCase(SigmoidGate, kp(384, 3), 3, "subnormal"),
		newCase(GatedNorm, kp(3072, 1), 4, "normal"), newCase(GatedNorm, kp(512, 2), 6, "edge"), newCase(GatedNorm, kp(640, 1), 3, "subnormal"),
	} {
		pc, err := Prepare(t.Seed()+uint64(i), c, false)
		t.Check(err, c.String())
		label := c.String()
		y := OpRows(c.Params, pc.In, c.M, c.K)
		key := gates.NewCase("mode", c.Mode.String(), "K", c.K, "P", c.P, "dist", c.Dist)
		t.Metric(key.Key("op_worst_err_over_bound"), CheckOpRows(t, label, c.Params, pc.In, y, c.M, c.K))
		t.Metric(key.Key("codes_worst_err_over_tol"), CheckCodes(t, label, pc))
	}
}

func kp(K, P int) shapes.KP { return shapes.KP{K: K, P: P} }

package ewrot

import (
	"math"

	"github.com/parharness/parharness/internal/par"
	"github.com/parharness/parharness/refimpl"
)

// The Go mirror of ewrot.hip's op half: the float32 op sequence of the
// header comment there, op for op (refimpl.FMA32 is the device fmaf; Go's
// float32 +, *, / and math.Sqrt of a float32 widened and narrowed back
// are the correctly rounded float32 ops). The producer half is refimpl's
// mirror of hipsrc/rot/rotq.h (wants.go).

// The constants of ew_expf, bit for bit (ewrot.hip's EXP_* hex literals).
var (
	expLog2E = math.Float32frombits(0x3fb8aa3b)
	expLn2Hi = math.Float32frombits(0x3f318000)
	expLn2Lo = math.Float32frombits(0xb95e8083)
	// 1/7!, 1/6!, 1/5!, 1/4!, 1/3! rounded to float32.
	expC = [5]float32{math.Float32frombits(0x39500d01), math.Float32frombits(0x3ab60b61), math.Float32frombits(0x3c088889),
		math.Float32frombits(0x3d2aaaab), math.Float32frombits(0x3e2aaaab)}
)

// fmax32 and fmin32 are the device fmaxf/fminf: a NaN operand yields the
// other one.
func fmax32(a, b float32) float32 {
	if a != a {
		return b
	}
	if b != b || a >= b {
		return a
	}
	return b
}

func fmin32(a, b float32) float32 {
	if a != a {
		return b
	}
	if b != b || a <= b {
		return a
	}
	return b
}

// ExpF32 is ew_expf: e^v in float32 by a fixed op sequence both targets
// compute bit for bit (TestExpF32Accuracy bounds it against math.Exp).
func ExpF32(v float32) float32 {
	v = fmin32(fmax32(v, -104), 89)
	n := float32(math.RoundToEven(float64(v * expLog2E)))
	r := refimpl.FMA32(-n, expLn2Hi, v)
	r = refimpl.FMA32(-n, expLn2Lo, r)
	p := expC[0]
	for _, c := range expC[1:] {
		p = refimpl.FMA32(p, r, c)
	}
	p = refimpl.FMA32(p, r, 0.5)
	p = refimpl.FMA32(p, r, 1)
	p = refimpl.FMA32(p, r, 1)
	k := int32(n)
	k1 := k / 2 // truncates toward zero, as C's
	k2 := k - k1
	return (p * math.Float32frombits(uint32(k1+127)<<23)) * math.Float32frombits(uint32(k2+127)<<23)
}

// SigmoidF32 is ew_sigmoid: 1 / (1 + ExpF32(-v)).
func SigmoidF32(v float32) float32 { return 1 / (1 + ExpF32(-v)) }

// bf16r rounds to bf16 (nearest, ties to even) and back: bf16_rne.
func bf16r(v float32) float32 { return refimpl.BF16ToF32(refimpl.F32ToBF16(v)) }

func sqrt32(v float32) float32 { return float32(math.Sqrt(float64(v))) } // exact: float64 holds 2*24+2 bits

// Elem is ew_elem: one element of the op from its float32 inputs (a: g or
// x; b: u, gate or z; w the norm weight and r the head's 1/rms, gated norm
// only). Its bf16 rounding points are the contract's.
func Elem(mode Mode, a, b, w, r float32) float32 {
	switch mode {
	case SiluMul:
		return bf16r(bf16r(a*SigmoidF32(a)) * b)
	case SigmoidGate:
		return bf16r(a * bf16r(SigmoidF32(b)))
	default:
		return bf16r(((a * r) * w) * (b * SigmoidF32(b)))
	}
}

// HeadRstd is the gated norm's r for one head's values xs (D of them):
// each lane's four squares added left to right, the 32 lane partials by
// the xor butterfly, the head's 128-groups in order from 0, then
// 1 / sqrt(S / D + eps).
func HeadRstd(xs []float32, eps float32) float32 {
	var S float32
	for g := 0; g < len(xs)/refimpl.GroupSize; g++ {
		var lanes [32]float32
		for l := range lanes {
			q := xs[g*refimpl.GroupSize+4*l:]
			// The conversions keep each square its own rounding (Go may
			// otherwise fuse a*b+c).
			s := q[0] * q[0]
			s = s + float32(q[1]*q[1])
			s = s + float32(q[2]*q[2])
			s = s + float32(q[3]*q[3])
			lanes[l] = s
		}
		for m := 16; m > 0; m >>= 1 {
			var next [32]float32
			for l := range lanes {
				next[l] = lanes[l] + lanes[l^m]
			}
			lanes = next
		}
		S = S + lanes[0]
	}
	return 1 / sqrt32(S/float32(len(xs))+eps)
}

// OpInputs are the op's bf16 inputs: a [M, InputCols(K)], b [M, K] (modes
// 1 and 2; nil for silu-mul) and w [D] (gated norm).
type OpInputs struct {
	A, B, W []uint16
}

// OpRows is the mirror of ew_op_bf16: the op's bf16 rows [M, K], on every
// CPU (one task per row).
func OpRows(p Params, in OpInputs, M, K int) []uint16 { return opRowsWith(p, in, M, K, Elem, HeadRstd) }

// opRowsWith is OpRows with its element and head-norm functions given (the
// tests plant bugs through them).
func opRowsWith(p Params, in OpInputs, M, K int, elem func(Mode, float32, float32, float32, float32) float32, rstd func([]float32, float32) float32) []uint16 {
	out := make([]uint16, M*K)
	cols := p.Mode.InputCols(K)
	f := func(h uint16) float32 { return refimpl.BF16ToF32(h) }
	par.For(M, func(m int) {
		row := in.A[m*cols : (m+1)*cols]
		var xs []float32
		if p.Mode == GatedNorm {
			xs = make([]float32, K)
			for k := range xs {
				xs[k] = f(row[k])
			}
		}
		var r float32
		for k := 0; k < K; k++ {
			var a, b, w float32
			switch p.Mode {
			case SiluMul:
				a, b = f(row[k]), f(row[K+k])
			case SigmoidGate:
				a, b = f(row[k]), f(in.B[m*K+k])
			default:
				if k%p.D == 0 {
					r = rstd(xs[k:k+p.D], p.Eps)
				}
				a, b, w = xs[k], f(in.B[m*K+k]), f(in.W[k%p.D])
			}
			out[m*K+k] = refimpl.F32ToBF16(elem(p.Mode, a, b, w, r))
		}
	})
	return out
}

// OpRows64 is the op's semantics in float64, unrounded (refimpl's fp64
// references): what the bf16 rows approximate.
func OpRows64(p Params, in OpInputs, M, K int) []float64 {
	cols := p.Mode.InputCols(K)
	d := func(h uint16) float64 { return refimpl.BF16ToF64(h) }
	a, b := make([]float64, M*K), make([]float64, M*K)
	for m := 0; m < M; m++ {
		for k := 0; k < K; k++ {
			a[m*K+k] = d(in.A[m*cols+k])
			switch p.Mode {
			case SiluMul:
				b[m*K+k] = d(in.A[m*cols+K+k])
			default:
				b[m*K+k] = d(in.B[m*K+k])
			}
		}
	}
	switch p.Mode {
	case SiluMul:
		return refimpl.SiLUMul(a, b)
	case SigmoidGate:
		return refimpl.SigmoidGate(a, b)
	default:
		w := make([]float64, p.D)
		for i := range w {
			w[i] = d(in.W[i])
		}
		return refimpl.GatedRMSNorm(a, b, w, float64(p.Eps))
	}
}

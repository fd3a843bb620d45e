package ewrot

import (
	"math"
	"math/rand/v2"

	"github.com/parharness/parharness/internal/par"
	"github.com/parharness/parharness/refimpl"
)

// Input distributions of the ops' operands:
//   - normal: N(0, 1) times a per-row scale e^N(0,1) (realistic activations);
//   - edge: a mix per element of large magnitudes (|v| in 8..200: sigmoid
//     saturated, e^-v overflowing float32 below -88.7 and clamped past
//     ±89/104), signed zeros, bf16 subnormals (~1e-39), values with a
//     4-bit significand (so bf16 products land exactly on bf16 rounding
//     ties and near them), and normal values;
//   - subnormal: the first operand (g, x) bf16 subnormals and tiny normals
//     in whole rows (the gated norm's sum of squares underflows float32;
//     silu of a subnormal is subnormal), the second (u, gate, z) normal,
//     so products of the two are normal and a kernel that flushes
//     denormals changes them.
var Dists = []string{"normal", "edge", "subnormal"}

// edgeValue draws one edge-distribution value.
func edgeValue(r *rand.Rand) float64 {
	s := 1.0
	if r.IntN(2) == 0 {
		s = -1
	}
	switch r.IntN(8) {
	case 0:
		return s * (8 + 192*r.Float64())
	case 1:
		return math.Copysign(0, s)
	case 2:
		return s * math.Ldexp(1+r.Float64(), -127-r.IntN(7))
	case 3, 4:
		// (1 + j/16) * 2^e: the product of two such (or of one and a
		// rounded silu) has few significant bits, often exactly a bf16 tie.
		return s * (1 + float64(r.IntN(16))/16) * math.Ldexp(1, r.IntN(9)-4)
	default:
		return r.NormFloat64()
	}
}

// RandomInputs draws an op's bf16 inputs for M rows of K: a [M,
// InputCols(K)], b [M, K] (modes 1 and 2) and the norm weight w [D]
// (gated norm; values near one as a trained weight, some with a 4-bit
// significand). Row m draws from its own stream, so the values do not
// depend on the CPU count.
func RandomInputs(rng *rand.Rand, p Params, M, K int, dist string) OpInputs {
	seed := rng.Uint64()
	cols := p.Mode.InputCols(K)
	in := OpInputs{A: make([]uint16, M*cols)}
	if p.Mode != SiluMul {
		in.B = make([]uint16, M*K)
	}
	draw := func(r *rand.Rand, rowScale float64, second bool) float64 {
		switch {
		case dist == "edge":
			return edgeValue(r)
		case dist == "subnormal" && !second:
			if r.IntN(4) == 0 {
				return r.NormFloat64() * 1e-36
			}
			return r.NormFloat64() * 1e-39
		}
		return r.NormFloat64() * rowScale
	}
	par.For(M, func(m int) {
		r := rand.New(rand.NewPCG(seed, uint64(m)))
		rowScale := math.Exp(r.NormFloat64())
		for k := 0; k < cols; k++ {
			in.A[m*cols+k] = refimpl.F64ToBF16(draw(r, rowScale, k >= K))
		}
		if in.B != nil {
			for k := 0; k < K; k++ {
				in.B[m*K+k] = refimpl.F64ToBF16(draw(r, rowScale, true))
			}
		}
	})
	if p.Mode == GatedNorm {
		r := rand.New(rand.NewPCG(seed, math.MaxUint64))
		in.W = make([]uint16, p.D)
		for i := range in.W {
			v := 1 + 0.2*r.NormFloat64()
			if i%5 == 0 {
				v = 1 + float64(r.IntN(16))/16
			}
			in.W[i] = refimpl.F64ToBF16(v)
		}
	}
	return in
}

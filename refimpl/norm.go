package refimpl

import (
	"fmt"
	"math"
)

// Elementwise producers that feed the rotated linears (the "rotation stream"
// kernels fuse them with rotate + quantize). All run in float64 on rows of
// the width of their weight; they are the semantics, not a float32 op order.

// RMSNormEps is the eps of the model's RMSNorms (rms_norm_eps of the
// Qwen3.8 / Qwen3-Next configs); pass it unless a test needs another.
const RMSNormEps = 1e-6

// GemmaRMSNorm is the model's RMSNorm with Gemma's weight offset, on rows of
// x (len(x) a multiple of len(w)):
//
//	y = x / sqrt(mean(x²) + eps) · (1 + w)
//
// The stored weight is the offset from one (initialized to zeros); vLLM's
// GemmaRMSNorm computes it in float32 in this order, after adding the
// residual in the activation dtype.
func GemmaRMSNorm(x, w []float64, eps float64) []float64 {
	return rmsRows("GemmaRMSNorm", x, w, eps, func(v, r, wk float64, _ int) float64 { return v * r * (1 + wk) })
}

// GatedRMSNorm is the GDN output norm (Qwen3-Next RMSNormGated), applied per
// head of len(w) = 128 features, with the gate z from in_proj_z:
//
//	y = (x / sqrt(mean(x²) + eps)) · w · silu(z)
//
// Here w multiplies directly (no 1+ offset; initialized to ones), and the
// mean is over the head, not the whole row.
func GatedRMSNorm(x, z, w []float64, eps float64) []float64 {
	if len(z) != len(x) {
		panic(fmt.Sprintf("refimpl: GatedRMSNorm: %d gates for %d values", len(z), len(x)))
	}
	return rmsRows("GatedRMSNorm", x, w, eps, func(v, r, wk float64, i int) float64 { return v * r * wk * SiLU(z[i]) })
}

func rmsRows(name string, x, w []float64, eps float64, f func(v, r, wk float64, i int) float64) []float64 {
	d := len(w)
	if d == 0 || len(x)%d != 0 {
		panic(fmt.Sprintf("refimpl: %s of %d values with a weight of %d", name, len(x), d))
	}
	y := make([]float64, len(x))
	for row := 0; row < len(x)/d; row++ {
		xs := x[row*d : (row+1)*d]
		ss := 0.0
		for _, v := range xs {
			ss += v * v
		}
		r := 1 / math.Sqrt(ss/float64(d)+eps)
		for k, v := range xs {
			y[row*d+k] = f(v, r, w[k], row*d+k)
		}
	}
	return y
}

// SiLU is x·sigmoid(x) = x / (1 + e^-x).
func SiLU(x float64) float64 { return x / (1 + math.Exp(-x)) }

// Sigmoid is 1 / (1 + e^-x).
func Sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// SiLUMul is the MLP activation feeding down_proj: y = silu(gate) · up,
// elementwise (gate and up are the two halves of gate_up's output).
func SiLUMul(gate, up []float64) []float64 {
	if len(gate) != len(up) {
		panic(fmt.Sprintf("refimpl: SiLUMul of %d gates and %d values", len(gate), len(up)))
	}
	y := make([]float64, len(gate))
	for i := range y {
		y[i] = SiLU(gate[i]) * up[i]
	}
	return y
}

// SigmoidGate is the attention output gate feeding o_proj: y = x ·
// sigmoid(gate), elementwise (gate is the second half of each q head's
// projection).
func SigmoidGate(x, gate []float64) []float64 {
	if len(gate) != len(x) {
		panic(fmt.Sprintf("refimpl: SigmoidGate of %d values and %d gates", len(x), len(gate)))
	}
	y := make([]float64, len(x))
	for i := range y {
		y[i] = x[i] * Sigmoid(gate[i])
	}
	return y
}

package refimpl

import (
	"math"
	"math/rand/v2"
	"testing"
)

// BF16GEMM equals the definition element by element (an exactly summed
// hand case, then random bf16 values summed naively in float64), and mag is
// Σ|x·w|, not |Σ x·w|.
func TestBF16GEMMMatchesDefinition(t *testing.T) {
	t.Run("hand", func(t *testing.T) {
		// x = [1, 2, -3], w rows [1, 1, 1] and [0.5, -0.25, 2].
		x := []uint16{F64ToBF16(1), F64ToBF16(2), F64ToBF16(-3)}
		w := []uint16{F64ToBF16(1), F64ToBF16(1), F64ToBF16(1), F64ToBF16(0.5), F64ToBF16(-0.25), F64ToBF16(2)}
		ref, mag := BF16GEMM(x, w, 1, 2, 3)
		if want := []float64{0, -6}; ref[0] != want[0] || ref[1] != want[1] {
			t.Errorf("ref = %v, want %v", ref, want)
		}
		if want := []float64{6, 7}; mag[0] != want[0] || mag[1] != want[1] {
			t.Errorf("mag = %v, want %v", mag, want)
		}
	})
	t.Run("random", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		M, N, K := 3, 5, 512
		x, w := make([]uint16, M*K), make([]uint16, N*K)
		for i := range x {
			x[i] = F64ToBF16(rng.NormFloat64())
		}
		for i := range w {
			w[i] = F64ToBF16(rng.NormFloat64() * 0.02)
		}
		ref, mag := BF16GEMM(x, w, M, N, K)
		for m := 0; m < M; m++ {
			for n := 0; n < N; n++ {
				s, a := 0.0, 0.0
				for k := 0; k < K; k++ {
					p := BF16ToF64(x[m*K+k]) * BF16ToF64(w[n*K+k])
					s += p
					a += math.Abs(p)
				}
				if d := math.Abs(ref[m*N+n] - s); d > 1e-12*a {
					t.Errorf("ref[%d,%d] = %g, naive %g", m, n, ref[m*N+n], s)
				}
				if d := math.Abs(mag[m*N+n] - a); d > 1e-12*a {
					t.Errorf("mag[%d,%d] = %g, naive %g", m, n, mag[m*N+n], a)
				}
			}
		}
	})
}

package refimpl

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// BF16GEMM is the fp64 reference of a plain bf16 GEMM,
//
//	ref[m, n] = Σ_k x[m, k]·w[n, k],   mag[m, n] = Σ_k |x[m, k]·w[n, k]|,
//
// for x [M, K] and w [N, K] given as bf16 bits, row-major (w's rows are the
// output columns: the TN layout of the vendor GEMMs). mag is what a
// float32-accumulating kernel's summation error scales with (it does not
// shrink when the terms cancel). Every bf16 product is exact in float64,
// so ref is exact up to float64 summation roundoff (at most about
// K·2^-53·mag), far below any float32 kernel's error. Both products run
// through gonum's Dgemm.
func BF16GEMM(x, w []uint16, M, N, K int) (ref, mag []float64) {
	if M <= 0 || N <= 0 || K <= 0 || len(x) != M*K || len(w) != N*K {
		panic(fmt.Sprintf("refimpl: BF16GEMM: %d x values and %d w values for M=%d N=%d K=%d", len(x), len(w), M, N, K))
	}
	decode := func(b []uint16) (v, a []float64) {
		v, a = make([]float64, len(b)), make([]float64, len(b))
		for i, h := range b {
			v[i] = BF16ToF64(h)
			a[i] = math.Abs(v[i])
		}
		return v, a
	}
	xv, xa := decode(x)
	wv, wa := decode(w)
	ref, mag = make([]float64, M*N), make([]float64, M*N)
	for _, p := range []struct{ a, b, c []float64 }{{xv, wv, ref}, {xa, wa, mag}} {
		blas64.Gemm(blas.NoTrans, blas.Trans, 1,
			blas64.General{Rows: M, Cols: K, Stride: K, Data: p.a},
			blas64.General{Rows: N, Cols: K, Stride: K, Data: p.b},
			0, blas64.General{Rows: M, Cols: N, Stride: N, Data: p.c})
	}
	return ref, mag
}

package skinny

import (
	"runtime"
	"sync"

	"github.com/parharness/parharness/refimpl"
)

// The Go mirror of skinny.hip's arithmetic (its header states the
// contract): the fp32 partial of every (slice, row, column) from the lanes'
// 8-term fmaf chains and the 32-lane tree, then the slices summed in order
// 0..S-1 and rounded to bf16. A kernel that follows the contract produces
// exactly Mirror's bits; a reduce in another slice order, a different
// lane tree or a lost term does not (the fp64 bound alone cannot tell a
// reordered sum from the right one).

// Partials are the fp32 partials ws[s, m, n] the kernels write, for x [M,
// K] and w [N, K] as bf16 bits (row-major), K a multiple of Slice: one
// split per slice.
func Partials(x, w []uint16, M, N, K int) []float32 { return SplitPartials(x, w, M, N, K, 1) }

// SplitPartials are the fp32 partials [S, M, N] of splits of J consecutive
// slices each (S = K / (J·Slice)): the cluster form's CTA partials for J > 1.
func SplitPartials(x, w []uint16, M, N, K, J int) []float32 {
	span := J * Slice
	S := K / span
	xf, wf := decodeBF16(x), decodeBF16(w)
	out := make([]float32, S*M*N)
	parallelCols(N, func(n int) {
		wr := wf[n*K : (n+1)*K]
		for m := 0; m < M; m++ {
			xr := xf[m*K : (m+1)*K]
			for s := 0; s < S; s++ {
				out[(s*M+m)*N+n] = splitPartial(xr[s*span:(s+1)*span], wr[s*span:(s+1)*span], J)
			}
		}
	})
	return out
}

// splitPartial is one warp's sum over J slices: lane l's chain over k =
// 256j + 8l .. 256j + 8l + 7 from 0 for each slice j, the lane's partial
// ((0 + t_0) + t_1) + ... + t_{J-1} of those chains, then the tree pairing
// lanes (l, l+16), then the sums at distance 8, 4, 2, 1. Each chain step
// is fmaf(x, w, a) for bf16 x and w: their product has at most 16
// significant bits, so it is exact in float32 unless it falls below the
// normal range, and the fma is then a single rounded add (refimpl.FMA32
// otherwise). The chains advance together, k step by k step; each lane's
// additions keep their order.
func splitPartial(x, w []float32, J int) float32 {
	var lanes [warpLanes]float32
	for j := 0; j < J; j++ {
		var chain [warpLanes]float32
		for t := 0; t < LaneK; t++ {
			for l := range chain {
				k := j*Slice + l*LaneK + t
				xv, wv := x[k], w[k]
				if p := float32(xv * wv); p <= -0x1p-126 || p >= 0x1p-126 {
					chain[l] = chain[l] + p
				} else { // zero, subnormal or underflowed: round once, the fma way
					chain[l] = refimpl.FMA32(xv, wv, chain[l])
				}
			}
		}
		for l := range lanes {
			lanes[l] = lanes[l] + chain[l]
		}
	}
	for d := warpLanes / 2; d >= 1; d /= 2 {
		for l := 0; l < d; l++ {
			lanes[l] = lanes[l] + lanes[l+d]
		}
	}
	return lanes[0]
}

// Reduce is the last block's sum: y[m, n] = bf16(((0 + p[0]) + p[1]) + ...
// + p[S-1]) over the partials [S, M, N] in slice order.
func Reduce(parts []float32, S, M, N int) []uint16 {
	return ReduceOrder(parts, S, M, N, nil)
}

// ReduceOrder is Reduce summing the slices in the given order (nil:
// 0..S-1; a permutation or a subset of the slices for tests that show the
// gate catching a wrong or incomplete reduce).
func ReduceOrder(parts []float32, S, M, N int, order []int) []uint16 {
	if order == nil {
		order = make([]int, S)
		for s := range order {
			order[s] = s
		}
	}
	out := make([]uint16, M*N)
	for i := range out {
		sum := float32(0)
		for _, s := range order {
			sum = sum + parts[s*M*N+i]
		}
		out[i] = refimpl.F32ToBF16(sum)
	}
	return out
}

// Mirror is the bf16 output [M, N] the one-slice-per-split kernels must
// produce.
func Mirror(x, w []uint16, M, N, K int) []uint16 { return MirrorSplits(x, w, M, N, K, 1) }

// MirrorSplits is the bf16 output of a kernel whose splits cover J slices
// each (Splits).
func MirrorSplits(x, w []uint16, M, N, K, J int) []uint16 {
	return Reduce(SplitPartials(x, w, M, N, K, J), K/(J*Slice), M, N)
}

func decodeBF16(b []uint16) []float32 {
	out := make([]float32, len(b))
	for i, h := range b {
		out[i] = refimpl.BF16ToF32(h)
	}
	return out
}

// parallelCols runs f(n) for n in 0..N-1 over GOMAXPROCS workers.
func parallelCols(N int, f func(n int)) {
	workers := min(runtime.GOMAXPROCS(0), N)
	var wg sync.WaitGroup
	for wk := 0; wk < workers; wk++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := wk; n < N; n += workers {
				f(n)
			}
		}()
	}
	wg.Wait()
}

package gemm

import (
	"encoding/binary"

	"github.com/parharness/parharness/refimpl"
)

// The zero-point epilogue (pq_gemm_pre_zpe, FormPreZPE). The in-loop form
// folds each group as acc += sc·tmp − (sc·d)·rs; the ZPE form folds only
// acc += sc·tmp and adds the zero-point term once, after the loop, as a
// matrix product per output tile:
//
//	acc[m,n] += Σ_g rs16[m,g] · (−sc·d)[g,n]
//
// on the f16 matrix op (sm_90 mma.m16n8k16, gfx1201 the f16 WMMA), 16
// groups a chunk, the block's zero-scales of one chunk staged in shared
// memory (so any G works). −sc·d enters as two exact fp16 operands hi + lo
// (gemm.hip zpe_split), so the products are exact and the only rounding
// beyond fp32 summation is that of the row sums to fp16:
//
// rs[m,g] is a sum of 128 e4m3 codes' values, each a multiple of 2^-9 and
// at most 448 in magnitude, so rs·512 is an integer of up to 26 bits
// (|rs| <= 57344 < 65504, no overflow). fp16 has 11 significant bits, so it
// holds rs exactly only when rs·512 has at most 11 significant bits, in
// general not: rs16 = RNE_f16(rs) with |rs16 − rs| <= 2^-11·|rs|
// (relative, as |rs| is either 0 or >= 2^-9, above fp16's subnormal range
// 2^-14). The gate's reference for this form is therefore the fp64 value
// of the ZPE algebra itself, with rs16 in place of rs (zpeRef), and the
// per-element bound only the fp32 summation term, with 2G more additions
// (the epilogue's hi and lo products). That the rounding is RNE, and not
// truncation, is then checked on the "zp-heavy" case, where the zero-point
// term dominates the magnitude.

// ZPERowSums converts row sums [P, M, G] (the producers' fp32 row sums) to
// the fp16 operand pq_gemm_pre_zpe reads: [P, Mpad, Gp] row-major, Mpad =
// refimpl.PadRows(M), Gp = G rounded up to 16, zeros past M and G, each
// value rounded to nearest even. Row-major is the fragment order: an sm_90
// A fragment's registers are pairs of adjacent groups of one row and a
// gfx1201 WMMA A operand 8 adjacent groups of one row.
func ZPERowSums(rs []float32, P, M, G int) []byte {
	return zpeRowSumsWith(rs, P, M, G, refimpl.F64ToF16)
}

func zpeRowSumsWith(rs []float32, P, M, G int, round func(float64) uint16) []byte {
	Mpad, Gp := refimpl.PadRows(M), ZPEGroupsPad(G)
	out := make([]byte, 2*P*Mpad*Gp)
	for p := 0; p < P; p++ {
		for m := 0; m < M; m++ {
			for g := 0; g < G; g++ {
				binary.LittleEndian.PutUint16(out[2*((p*Mpad+m)*Gp+g):], round(float64(rs[(p*M+m)*G+g])))
			}
		}
	}
	return out
}

// ZPEGroupsPad is G rounded up to the epilogue's 16-group chunk.
func ZPEGroupsPad(G int) int { return (G + 15) / 16 * 16 }

// zpeRef is rr for the ZPE form: ref plus the exact effect of rounding the
// row sums to fp16, As[m]·Σ_g sc·d·(rs − rs16), for the rows and columns
// of rr's subset, rs16 = RNE_f16(rs) as ZPERowSums rounds (a kernel fed
// other fp16 row sums, e.g. truncated ones, is off by their difference
// times the zero-scales). The magnitude grows by
// 2^-11 of itself (|rs16| <= (1 + 2^-11)|rs|) and the bound counts 2G more
// additions.
func zpeRef(rr gemmRef, w *refimpl.QWeight, parts []int, rsums, tscale []float32, M int) gemmRef {
	G, N := w.Groups(), w.N
	h := 1 << (w.Bits - 1)
	rows, cols := rr.sel.RowsOf(M), rr.sel.ColsOf(N)
	part := make([]int, N)
	for p, start := 0, 0; p < len(parts); p++ {
		for n := start; n < start+parts[p]; n++ {
			part[n] = p
		}
		start += parts[p]
	}
	ref := append([]float64(nil), rr.ref...)
	mag := append([]float64(nil), rr.mag...)
	for ri, m := range rows {
		for ci, n := range cols {
			p := part[n]
			corr := 0.0
			for g := 0; g < G; g++ {
				rs := float64(rsums[(p*M+m)*G+g])
				rs16 := refimpl.RoundF16(rs)
				corr += w.Scales[g*N+n] * float64(w.Zero(g, n)-h) * (rs - rs16)
			}
			i := ri*len(cols) + ci
			ref[i] += float64(tscale[p*M+m]) * corr
			mag[i] *= 1 + 0x1p-11
		}
	}
	rr.ref, rr.mag = ref, mag
	rr.floor = refimpl.Bf16Floor(ref)
	rr.extraAdds = 2 * G
	return rr
}

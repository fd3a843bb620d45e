package refimpl

import (
	"errors"
	"fmt"

	"github.com/parharness/parharness/internal/par"
)

// The row layout of 4-bit weights: the natural order of the dequantized
// weight W[n, k] (one row of K codes per output column n), two codes a
// byte. Code (k, n) is in byte
//
//	n*K/2 + k/2
//
// low nibble for even k, high nibble for odd k; a column's group g is the
// 64 bytes from n*K/2 + 64g. Scale words as W4Packed.SZ (unchanged). It
// holds the same codes as RepackW4's fragment order (TestRowAndFragmentSameCodes)
// and exists to measure what that order buys: the row-layout decode kernels
// (pq_gemm_dec_rl_*, families/gemm) rebuild the fragment words from it in
// registers and give bit-identical outputs (bench2 wp).
type W4Row struct {
	K, N  int
	Codes []byte   // N*K/2
	SZ    []uint32 // [K/128, N], as W4Packed.SZ
}

// RowOffset returns the byte of weight (k, n) in the row layout and
// whether it sits in the high nibble.
func RowOffset(k, n, K int) (byte int, high bool) { return n*K/2 + k/2, k%2 == 1 }

// Code returns weight (k, n)'s 4-bit code.
func (r *W4Row) Code(k, n int) uint8 {
	b, hi := RowOffset(k, n, r.K)
	if hi {
		return r.Codes[b] >> 4
	}
	return r.Codes[b] & 0xF
}

// RepackRow converts a 4-bit AWQ weight into the row layout. Its contract
// is RepackW4's (N a multiple of 16, fp16 scales), so both layouts exist
// for every weight the GEMMs take.
func RepackRow(w *QWeight) (*W4Row, error) {
	p, err := RepackW4(w) // validation and the scale words
	if err != nil {
		return nil, fmt.Errorf("refimpl: RepackRow: %w", err)
	}
	K, N := w.K, w.N
	r := &W4Row{K: K, N: N, Codes: make([]byte, N*K/2), SZ: p.SZ}
	codes := UnpackAWQ(w.QWeight, K, N) // [K, N]
	for k := 0; k < K; k++ {
		for n := 0; n < N; n++ {
			b, hi := RowOffset(k, n, K)
			c := codes[k*N+n] & 0xF
			if hi {
				c <<= 4
			}
			r.Codes[b] |= c
		}
	}
	return r, nil
}

// RowFromW4 is the row layout of already repacked weights (the same codes,
// read through W4Offset).
func RowFromW4(p *W4Packed) (*W4Row, error) {
	K, N := p.K, p.N
	if K <= 0 || K%GroupSize != 0 || N <= 0 || N%16 != 0 || len(p.Words) != K*N/8 {
		return nil, errors.New("refimpl: RowFromW4: not a repacked weight (K % 128, N % 16, K*N/8 words)")
	}
	r := &W4Row{K: K, N: N, Codes: make([]byte, N*K/2), SZ: p.SZ}
	par.For(K/GroupSize, func(g int) { // a group's bytes are its own (RowOffset)
		for k := g * GroupSize; k < (g+1)*GroupSize; k++ {
			for n := 0; n < N; n++ {
				wi, nib := W4Offset(k, n, K)
				c := byte(p.Words[wi]>>(4*nib)) & 0xF
				b, hi := RowOffset(k, n, K)
				if hi {
					c <<= 4
				}
				r.Codes[b] |= c
			}
		}
	})
	return r, nil
}

// SZBytes is the little-endian byte image of the scale words.
func (r *W4Row) SZBytes() []byte { return u32LE(r.SZ) }

package refimpl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/parharness/parharness/internal/par"
)

// The W4A8 GEMMs' weight order (families/gemm/gemm.hip), made from a checkpoint's
// AWQ tensors once at load. Lossless: UnpackW4(RepackW4(w)) == w, field for
// field (codes, zeros and scale bits).
//
// Codes: N/16 column tiles x G groups x 1 KiB (g inner, so one column tile's
// groups are contiguous and a decode warp streams them in order). Byte
//
//	((j16*G + g)*2 + h)*512 + lane*16 + 4*s          (word s = 0..3)
//
// holds the 8 codes of column n = 16*j16 + 8*h + lane/4 at k32 step s of
// group g, tig = lane%4. Local index l = 0..7 is k = 128g + 32s + 4tig + l
// for l < 4 and k = 128g + 32s + 16 + 4tig + (l-4) for l >= 4 (the
// mma.m16n8k32 fragment order: b0 | b1 of the row-major op's B fragment, or
// the a0|a2 / a1|a3 halves of the swapped op's A fragment); code l sits in
// nibble (l>>1) + 4(l&1) (bits 4·nibble..+3), so nibbles j and j+4 are the
// k pair (2j, 2j+1) and one mask with 0x000F000F makes an fp16 pair on sm_90
// (hipsrc/arch/mma.h). A lane turns each word into its operand registers
// with no data movement between lanes.
//
// Scales: SZ [G, N] uint32 = fp16 bits of the scale | uint16(int16(z - 8)) << 16.
// The kernels form sc (exact) and sc·(z-8) (exact in fp32: an 11-bit
// significand times a 4-bit integer). 4 bytes per 128 weights: the weight
// stream is 4.25 bits per weight, as the AWQ tensors.
type W4Packed struct {
	K, N  int
	Words []uint32 // K*N/8
	SZ    []uint32 // [K/128, N]
}

// W4Offset returns the word index and nibble of weight (k, n) in the
// repacked codes.
func W4Offset(k, n, K int) (word, nibble int) {
	G := K / GroupSize
	j16, h, col := n/16, (n/8)%2, n%8
	g, kk := k/GroupSize, k%GroupSize
	s, r := kk/32, kk%32
	tig := (r % 16) / 4
	lane := col*4 + tig
	l := r%4 + 4*(r/16) // local index in the fragment
	nibble = l>>1 + 4*(l&1)
	word = (((j16*G+g)*2+h)*512+lane*16)/4 + s
	return
}

// RepackW4 converts a 4-bit AWQ weight into the GEMM order. N must be a
// multiple of 16; every scale must be an fp16 value (checkpoint scales are).
func RepackW4(w *QWeight) (*W4Packed, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	if w.Bits != 4 {
		return nil, fmt.Errorf("refimpl: RepackW4: %d-bit weights (only int4 has a GEMM order yet)", w.Bits)
	}
	if w.N%16 != 0 {
		return nil, fmt.Errorf("refimpl: RepackW4: N=%d is not a multiple of 16", w.N)
	}
	K, N, G := w.K, w.N, w.Groups()
	p := &W4Packed{K: K, N: N, Words: make([]uint32, K*N/8), SZ: make([]uint32, G*N)}
	// A group's words are its own (W4Offset), so the groups run in
	// parallel; within one, row by row over k: unpack one AWQ row, scatter
	// its nibbles.
	bad := make([]error, G)
	par.For(G, func(g int) {
		codes := make([]uint8, N)
		for k := g * GroupSize; k < (g+1)*GroupSize; k++ {
			row := w.QWeight[k*(N/8) : (k+1)*(N/8)]
			for c, word := range row {
				u := uint32(word)
				for i := 0; i < 8; i++ {
					codes[8*c+AWQOrder[i]] = uint8(u >> (4 * i) & 0xF)
				}
			}
			for n := 0; n < N; n++ {
				wi, nib := W4Offset(k, n, K)
				p.Words[wi] |= uint32(codes[n]) << (4 * nib)
			}
		}
		for n := 0; n < N; n++ {
			s := w.Scales[g*N+n]
			h := F64ToF16(s)
			if F16ToF64(h) != s && !(math.IsNaN(s) && math.IsNaN(F16ToF64(h))) {
				bad[g] = fmt.Errorf("refimpl: RepackW4: scale[%d,%d] = %g is not an fp16 value", g, n, s)
				return
			}
			d := int16(w.Zero(g, n) - 8)
			p.SZ[g*N+n] = uint32(h) | uint32(uint16(d))<<16
		}
	})
	for _, err := range bad { // the first bad scale in (g, n) order, as a serial loop names it
		if err != nil {
			return nil, err
		}
	}
	return p, nil
}

// UnpackW4 is the inverse of RepackW4: the AWQ tensors back.
func UnpackW4(p *W4Packed) (*QWeight, error) {
	K, N := p.K, p.N
	if K <= 0 || K%GroupSize != 0 || N <= 0 || N%16 != 0 {
		return nil, fmt.Errorf("refimpl: UnpackW4: [%d, %d] is not a repacked shape", K, N)
	}
	G := K / GroupSize
	if len(p.Words) != K*N/8 || len(p.SZ) != G*N {
		return nil, errors.New("refimpl: UnpackW4: slice lengths do not match K and N")
	}
	codes := make([]uint8, K*N)
	for k := 0; k < K; k++ {
		for n := 0; n < N; n++ {
			wi, nib := W4Offset(k, n, K)
			codes[k*N+n] = uint8(p.Words[wi] >> (4 * nib) & 0xF)
		}
	}
	zeros := make([]uint8, G*N)
	scales := make([]float64, G*N)
	for i, v := range p.SZ {
		d := int(int16(uint16(v >> 16)))
		if d < -8 || d > 7 {
			return nil, fmt.Errorf("refimpl: UnpackW4: zero point %d+8 at [%d, %d] is not 4-bit", d, i/N, i%N)
		}
		zeros[i] = uint8(d + 8)
		scales[i] = F16ToF64(uint16(v))
	}
	return &QWeight{K: K, N: N, Bits: 4, QWeight: PackAWQ(codes, K, N), QZeros: PackAWQ(zeros, G, N), Scales: scales}, nil
}

// SZBytes is the little-endian byte image of the scale words.
func (p *W4Packed) SZBytes() []byte { return u32LE(p.SZ) }

// WordBytes is the little-endian byte image of the repacked codes.
func (p *W4Packed) WordBytes() []byte { return u32LE(p.Words) }

// f32LE is v as little-endian float32 bits.
func f32LE(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func u32LE(v []uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
	}
	return b
}

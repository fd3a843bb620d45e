package refimpl

import (
	"errors"
	"fmt"

	"github.com/parharness/parharness/internal/par"
)

// The W5A8 GEMMs' weight order (families/gemm/gemm.hip, the 5-bit kernels):
// the 4-bit order of RepackW4 for the low nibbles, plus a plane stream read
// beside it. Lossless: UnpackW5(RepackW5(w)) == w.
//
// Words: RepackW4's words of the low nibbles c & 15 (N/16 column tiles x G
// groups x 1 KiB).
//
// Planes: one uint32 per four weight words, K*N/32 words: plane word i/4,
// byte i%4 holds the fifth bits of weight word i, bit b of that byte the
// fifth bit of nibble b (the int5 byte order of hipsrc/format/int5.h). A
// lane's 16 bytes of one group (words s = 0..3) thus have one plane word
// whose byte s belongs to word s, at byte 4·(word index of s=0)/4 of the
// plane stream: N/16 column tiles x G groups x 256 B.
//
// Scales: SZ as RepackW4 but with d = z − 16: fp16 bits of the scale |
// uint16(int16(z − 16)) << 16; sc·d is exact in fp32 (11 + 5 bits).
//
// Bytes: the words are 4 bits per weight, the planes 1, the scale words 4
// per 128 weights: 5.25 bits per weight, 1.235 x the 4-bit stream's 4.25
// (the planes alone are 1.25 x the 4-bit words).
type W5Packed struct {
	K, N   int
	Words  []uint32 // K*N/8, low nibbles in the RepackW4 order
	Planes []uint32 // K*N/32
	SZ     []uint32 // [K/128, N], d = z − 16
}

// W5PlaneBit returns the plane word index and bit of weight (k, n).
func W5PlaneBit(k, n, K int) (word, bit int) {
	wi, nib := W4Offset(k, n, K)
	return wi / 4, 8*(wi%4) + nib
}

// RepackW5 converts a 5-bit weight into the W5 GEMM order. N must be a
// multiple of 32 (the checkpoint planes' width); every scale an fp16 value.
func RepackW5(w *QWeight) (*W5Packed, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	if w.Bits != 5 {
		return nil, fmt.Errorf("refimpl: RepackW5: %d-bit weights, want 5", w.Bits)
	}
	K, N, G := w.K, w.N, w.Groups()
	// The low nibbles as a 4-bit weight: RepackW4 gives their words (its
	// scale words, with z − 8 of the low zero nibble, are replaced below).
	lo := &QWeight{K: K, N: N, Bits: 4, QWeight: w.QWeight, QZeros: w.QZeros, Scales: w.Scales}
	p4, err := RepackW4(lo)
	if err != nil {
		return nil, fmt.Errorf("refimpl: RepackW5: %w", err)
	}
	p := &W5Packed{K: K, N: N, Words: p4.Words, Planes: make([]uint32, K*N/32), SZ: p4.SZ}
	par.For(G, func(g int) { // a group's plane words are its own (W5PlaneBit)
		for k := g * GroupSize; k < (g+1)*GroupSize; k++ {
			row := w.QHigh[k*(N/32) : (k+1)*(N/32)]
			for n := 0; n < N; n++ {
				if PlaneBit(row, n) != 0 {
					pw, b := W5PlaneBit(k, n, K)
					p.Planes[pw] |= 1 << b
				}
			}
		}
		for n := 0; n < N; n++ {
			d := int16(w.Zero(g, n) - 16)
			p.SZ[g*N+n] = p.SZ[g*N+n]&0xFFFF | uint32(uint16(d))<<16
		}
	})
	return p, nil
}

// UnpackW5 is the inverse of RepackW5: the checkpoint tensors back.
func UnpackW5(p *W5Packed) (*QWeight, error) {
	K, N := p.K, p.N
	if K <= 0 || K%GroupSize != 0 || N <= 0 || N%32 != 0 {
		return nil, fmt.Errorf("refimpl: UnpackW5: [%d, %d] is not a 5-bit repacked shape", K, N)
	}
	G := K / GroupSize
	if len(p.Words) != K*N/8 || len(p.Planes) != K*N/32 || len(p.SZ) != G*N {
		return nil, errors.New("refimpl: UnpackW5: slice lengths do not match K and N")
	}
	codes := make([]uint8, K*N)
	for k := 0; k < K; k++ {
		for n := 0; n < N; n++ {
			wi, nib := W4Offset(k, n, K)
			pw, b := W5PlaneBit(k, n, K)
			codes[k*N+n] = uint8(p.Words[wi]>>(4*nib)&0xF) | uint8(p.Planes[pw]>>b&1)<<4
		}
	}
	zeros := make([]uint8, G*N)
	scales := make([]float64, G*N)
	for i, v := range p.SZ {
		d := int(int16(uint16(v >> 16)))
		if d < -16 || d > 15 {
			return nil, fmt.Errorf("refimpl: UnpackW5: zero point %d+16 at [%d, %d] is not 5-bit", d, i/N, i%N)
		}
		zeros[i] = uint8(d + 16)
		scales[i] = F16ToF64(uint16(v))
	}
	ql, qh := PackInt5(codes, K, N)
	zl, zh := PackInt5(zeros, G, N)
	return &QWeight{K: K, N: N, Bits: 5, QWeight: ql, QHigh: qh, QZeros: zl, ZHigh: zh, Scales: scales}, nil
}

// PlaneBytes is the little-endian byte image of the plane stream.
func (p *W5Packed) PlaneBytes() []byte { return u32LE(p.Planes) }

// WordBytes is the little-endian byte image of the low-nibble words.
func (p *W5Packed) WordBytes() []byte { return u32LE(p.Words) }

// SZBytes is the little-endian byte image of the scale words.
func (p *W5Packed) SZBytes() []byte { return u32LE(p.SZ) }

package refimpl

import (
	"fmt"
	"math"
)

// The float32 mirror of the rotate-and-quantize producers
// (families/producers/producers.hip) and the records they read. The kernels' op order is
// part of their contract; this file follows it op for op so the producer
// gates can compare bytes:
//
//	v[c]  = float32(bf16 x[c]) * float32(channel_scales[c])    (one rounded product)
//	per layer r, per pair (i, j) with c = float32(cos θ), s = float32(sin θ):
//	  v[i] = fma(c, v[i], s*v[j])          (s*v[j] rounded to float32 first)
//	  v[j] = fma(c, v[j], -(s*v[i]_old))
//
// fma is refimpl.FMA32 (exact fused multiply-add); Go has no float32 FMA and
// may fuse a*b+c on some targets, so every product is written as an explicit
// float32 conversion.

// RotRecords are the per-lane rotation records of P partitions, in the
// order the producers load them: for partition p, layer r, group g and lane
// l (0..31), lane l owns pairs l and l+32 of that layer and group.
type RotRecords struct {
	P, K, Krot int
	Idx        []uint32  // [P][Krot][G][32]: i0 | j0<<8 | i1<<16 | j1<<24
	CS         []float32 // [P][Krot][G][32][4]: cos0, sin0, cos1, sin1
	ChS        []float32 // [P][K]: channel scales (fp16 values, exact in float32)
}

// Bytes are the records as the kernels' three buffers take them, little
// endian: the pair indices (u32 each), the cos/sin quadruples and the
// channel scales (float32 each).
func (rr *RotRecords) Bytes() (idx, cs, chs []byte) {
	return u32LE(rr.Idx), f32LE(rr.CS), f32LE(rr.ChS)
}

// LanePairs is the number of pairs a lane owns per layer and group.
const LanePairs = PairsPerGroup / 32

// RotateF32Into unrolls a lane's pairs: it is written for two.
var _ [LanePairs - 2][2 - LanePairs]struct{}

// BuildRotRecords prepares the records of a launch's partitions (at most
// MaxRotationsPerLaunch). Every rotation needs Krot == DefaultKrot (the
// kernels unroll 8 layers) and the same K.
func BuildRotRecords(rots []*Rotation) (*RotRecords, error) {
	K, chs, err := launchRotations(rots)
	if err != nil {
		return nil, err
	}
	krot := DefaultKrot
	G := K / GroupSize
	rr := &RotRecords{P: len(rots), K: K, Krot: krot,
		Idx: make([]uint32, len(rots)*krot*G*32), CS: make([]float32, len(rots)*krot*G*32*4), ChS: chs}
	for p, r := range rots {
		for l := 0; l < krot; l++ {
			for g := 0; g < G; g++ {
				for lane := 0; lane < 32; lane++ {
					o := ((p*krot+l)*G+g)*32 + lane
					var w uint32
					for h := 0; h < LanePairs; h++ {
						t := lane + 32*h
						i, j, theta := r.Pair(l, g, t)
						w |= (uint32(i) | uint32(j)<<8) << (16 * h)
						s, c := math.Sincos(theta)
						rr.CS[4*o+2*h], rr.CS[4*o+2*h+1] = float32(c), float32(s)
					}
					rr.Idx[o] = w
				}
			}
		}
	}
	return rr, nil
}

// launchRotations checks the rotations of one producer launch (1..3
// partitions, each valid, Krot == DefaultKrot, one K) and returns K and
// the channel scales [P][K] as float32 (fp16 values: exact).
func launchRotations(rots []*Rotation) (K int, chs []float32, err error) {
	if len(rots) == 0 || len(rots) > MaxRotationsPerLaunch {
		return 0, nil, fmt.Errorf("refimpl: %d rotations in one launch; the producers take 1..%d", len(rots), MaxRotationsPerLaunch)
	}
	K = rots[0].K
	chs = make([]float32, len(rots)*K)
	for p, r := range rots {
		if err := r.Validate(); err != nil {
			return 0, nil, fmt.Errorf("refimpl: partition %d: %w", p, err)
		}
		if r.K != K || r.Krot != DefaultKrot {
			return 0, nil, fmt.Errorf("refimpl: partition %d: K=%d Krot=%d; this launch needs K=%d and Krot=%d", p, r.K, r.Krot, K, DefaultKrot)
		}
		for c := 0; c < K; c++ {
			chs[p*K+c] = float32(r.ChannelScales[c])
		}
	}
	return K, chs, nil
}

// RotateF32 is the producers' rotation of bf16 rows x [M, K] for partition
// p of the records, in float32 with the kernels' op order; it returns v [M, K].
func (rr *RotRecords) RotateF32(x []uint16, M, p int) []float32 {
	v := make([]float32, M*rr.K)
	rr.RotateF32Into(v, x, M, p)
	return v
}

// RotateF32Into is RotateF32 writing v [M, K] (len(v) >= M*K). It panics
// if a record names a channel outside its 128-group (records that
// BuildRotRecords did not build).
//
// Each row-group is rotated on its own, so the loop runs group by group
// over all M rows: one group's records (8 layers x 32 lanes) stay in the
// L1 cache across the rows instead of every row streaming the whole
// partition's records.
func (rr *RotRecords) RotateF32Into(v []float32, x []uint16, M, p int) {
	K, G, krot := rr.K, rr.K/GroupSize, rr.Krot
	if len(x) < M*K || len(v) < M*K {
		panic(fmt.Sprintf("refimpl: RotateF32 of [%d, %d] with %d inputs and %d outputs", M, K, len(x), len(v)))
	}
	recs := rr.Idx[p*krot*G*32 : (p+1)*krot*G*32]
	for o, w := range recs {
		if w&0x80808080 != 0 {
			panic(fmt.Sprintf("refimpl: rotation record %d of partition %d (%#08x) names a channel past 127", o, p, w))
		}
	}
	chs := rr.ChS[p*K : (p+1)*K]
	for m := 0; m < M; m++ {
		xr, vr := x[m*K:(m+1)*K], v[m*K:(m+1)*K]
		for c, s := range chs {
			vr[c] = float32(BF16ToF32(xr[c]) * s)
		}
	}
	for g := 0; g < G; g++ {
		for m := 0; m < M; m++ {
			sv := (*[GroupSize]float32)(v[m*K+g*GroupSize:])
			for l := 0; l < krot; l++ {
				o := ((p*krot+l)*G + g) * 32
				idx, cs := rr.Idx[o:o+32], rr.CS[4*o:4*o+128]
				for lane, w := range idx {
					q := (*[4]float32)(cs[4*lane:])
					// Two pairs per lane (LanePairs), in the kernels' order;
					// indices are below 128 (checked above).
					for h := 0; h < 2; h++ {
						i, j := (w>>(16*h))&0x7F, (w>>(16*h+8))&0x7F
						c, s := q[2*h], q[2*h+1]
						a, b := sv[i], sv[j]
						// FMA32(c, a, s*b) and FMA32(c, b, -(s*a)), inlined.
						ta, tb := float32(s*b), -float32(s*a)
						pi, pj := float64(float64(c)*float64(a)), float64(float64(c)*float64(b))
						si, sj := pi+float64(ta), pj+float64(tb)
						if fma32Near(si) {
							si = fma32Odd(pi, si, ta)
						}
						if fma32Near(sj) {
							sj = fma32Odd(pj, sj, tb)
						}
						sv[i], sv[j] = float32(si), float32(sj)
					}
				}
			}
		}
	}
}

// RoundRowsBF16 rounds float32 values to bf16 (the pass-A rows) and returns
// both the bf16 bits and their float32 values.
func RoundRowsBF16(v []float32) ([]uint16, []float32) {
	h := make([]uint16, len(v))
	f := make([]float32, len(v))
	for i, x := range v {
		h[i] = F32ToBF16(x)
		f[i] = BF16ToF32(h[i])
	}
	return h, f
}

// GroupAmax returns the per-(row, group) max |v| of rows [M, K] (NaN ignored).
func GroupAmax(v []float32, M, K int) []float32 {
	G := K / GroupSize
	out := make([]float32, M*G)
	for m := 0; m < M; m++ {
		for g := 0; g < G; g++ {
			var a float32
			for _, x := range v[m*K+g*GroupSize : m*K+(g+1)*GroupSize] {
				if ax := float32(math.Abs(float64(x))); ax > a {
					a = ax
				}
			}
			out[m*G+g] = a
		}
	}
	return out
}

// TiledOffset is the byte offset of code (m, k) inside one partition's
// fragment-tiled block (hipsrc/format/tiled.h, sm_90 mma.m16n8k32 A order):
// tiles of 16 rows x 32 columns, 512 bytes each, row-major over (m/16, k/32);
// inside a tile, lane (r%8)*4 + (c%16)/4, register r/8 + 2*(c/16), byte c%4,
// each lane's four registers contiguous (16 bytes).
func TiledOffset(m, k, K int) int {
	r, c := m%16, k%32
	tile := (m/16)*(K/32) + k/32
	lane := (r%8)*4 + (c%16)/4
	reg := r/8 + 2*(c/16)
	return tile*512 + lane*16 + reg*4 + c%4
}

// PadRows is M rounded up to the 16-row fragment tile (rows past M are
// zeros in a tiled buffer).
func PadRows(M int) int { return (M + 15) / 16 * 16 }

// TileRows rearranges row-major codes [Mpad, K] of one partition into the
// tiled order; rows past M are zero.
func TileRows(codes []uint8, M, K int) []uint8 {
	Mpad := PadRows(M)
	out := make([]uint8, Mpad*K)
	for m := 0; m < M; m++ {
		for k := 0; k < K; k++ {
			out[TiledOffset(m, k, K)] = codes[m*K+k]
		}
	}
	return out
}

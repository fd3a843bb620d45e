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
	K, G := rr.K, rr.K/GroupSize
	v := make([]float32, M*K)
	for m := 0; m < M; m++ {
		for c := 0; c < K; c++ {
			v[m*K+c] = float32(BF16ToF32(x[m*K+c]) * rr.ChS[p*K+c])
		}
		for g := 0; g < G; g++ {
			sv := v[m*K+g*GroupSize : m*K+(g+1)*GroupSize]
			for l := 0; l < rr.Krot; l++ {
				for lane := 0; lane < 32; lane++ {
					o := ((p*rr.Krot+l)*G+g)*32 + lane
					w := rr.Idx[o]
					for h := 0; h < LanePairs; h++ {
						i, j := (w>>(16*h))&0xFF, (w>>(16*h+8))&0xFF
						c, s := rr.CS[4*o+2*h], rr.CS[4*o+2*h+1]
						a, b := sv[i], sv[j]
						sv[i] = FMA32(c, a, float32(s*b))
						sv[j] = FMA32(c, b, -float32(s*a))
					}
				}
			}
		}
	}
	return v
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

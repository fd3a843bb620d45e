package refimpl

import "math"

// E4M3 is the OCP fp8 e4m3fn format: 1 sign bit, 4 exponent bits (bias 7),
// 3 mantissa bits, no infinities, NaN only at S.1111.111 (0x7F, 0xFF).
// Largest finite magnitude 448 (0x7E), smallest subnormal 2^-9 (0x01).
//
// The encode contract shared by every producer kernel and by this package
// (docs/formats.md):
//   - NaN encodes to 0x00;
//   - |x| >= 448 (and ±Inf) encodes to sign|0x7E (saturation);
//   - otherwise round to nearest, ties to even;
//   - a result of zero is 0x00, never 0x80 (so -0 and tiny negatives give 0x00).
//
// Note: EncodeE4M3 is written as integer operations on the float32 bits so
// that the device software encoder (hipsrc/format/e4m3.h, e4m3_encode_sw) is the
// same algorithm line for line; the gate e4m3-go-oracle checks it against an
// independent nearest-value search on all 2^32 inputs.
const (
	E4M3MaxFinite = 448.0
	e4m3MaxBits   = 0x43E00000 // float32 bits of 448.0
	e4m3HalfSub   = 0x3A800000 // float32 bits of 2^-10, half the smallest subnormal
)

// EncodeE4M3 encodes a float32 under the contract above.
func EncodeE4M3(x float32) uint8 { return EncodeE4M3Bits(math.Float32bits(x)) }

// EncodeE4M3Bits is EncodeE4M3 on raw float32 bits.
func EncodeE4M3Bits(u uint32) uint8 {
	sign := uint8(u>>24) & 0x80
	a := u & 0x7FFFFFFF
	switch {
	case a > 0x7F800000: // NaN
		return 0
	case a >= e4m3MaxBits: // saturate, Inf included
		return sign | 0x7E
	case a <= e4m3HalfSub: // rounds to zero (2^-10 itself ties to the even code 0)
		return 0
	}
	exp := a >> 23
	if exp < 121 { // below 2^-6: e4m3 subnormal, value/2^-9 rounded to an integer 1..8
		mant := (a & 0x7FFFFF) | 0x800000
		shift := 141 - exp // 21..24
		q := mant >> shift
		rem := mant & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && q&1 == 1) {
			q++
		}
		return sign | uint8(q)
	}
	// Normal: keep 3 mantissa bits, round the 20 dropped bits to nearest even;
	// a carry ripples into the exponent, which is exactly what rounding up needs.
	r := (a + 0x7FFFF + ((a >> 20) & 1)) >> 20
	return sign | uint8(r-(120<<3))
}

// DecodeE4M3 returns the value of an e4m3 code. Both NaN codes decode to a
// quiet NaN carrying the code's sign (float32 bits 0x7FC00000 / 0xFFC00000).
func DecodeE4M3(c uint8) float32 { return math.Float32frombits(DecodeE4M3Bits(c)) }

// DecodeE4M3Bits is DecodeE4M3 returning float32 bits.
func DecodeE4M3Bits(c uint8) uint32 {
	sign := uint32(c&0x80) << 24
	e := uint32(c>>3) & 0xF
	m := uint32(c) & 7
	switch {
	case e == 0xF && m == 7:
		return sign | 0x7FC00000
	case e == 0 && m == 0:
		return sign
	case e == 0: // subnormal m * 2^-9: normalise into float32
		v := float32(m) * (1.0 / 512)
		return sign | math.Float32bits(v)
	}
	return sign | (e+120)<<23 | m<<20
}

// E4M3OracleTable returns the 127 non-negative finite e4m3 values in
// increasing order (index == code for codes 0x00..0x7E), computed in float64
// from the format's definition rather than from DecodeE4M3.
func E4M3OracleTable() []float64 {
	t := make([]float64, 0, 127)
	for m := 0; m < 8; m++ { // subnormals and zero
		t = append(t, float64(m)*math.Pow(2, -9))
	}
	for e := 1; e <= 15; e++ {
		for m := 0; m < 8; m++ {
			if e == 15 && m == 7 {
				break
			}
			t = append(t, (1+float64(m)/8)*math.Pow(2, float64(e-7)))
		}
	}
	return t
}

// E4M3Oracle encodes by searching the value table for the nearest value
// (ties to the even code), applying the NaN, saturation and zero rules of the
// contract. It is slow and independent of EncodeE4M3 on purpose.
func E4M3Oracle(x float32, table []float64) uint8 {
	if x != x {
		return 0
	}
	v := math.Abs(float64(x))
	var sign uint8
	if math.Signbit(float64(x)) {
		sign = 0x80
	}
	if v >= E4M3MaxFinite {
		return sign | 0x7E
	}
	// binary search for the first table value >= v
	lo, hi := 0, len(table)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if table[mid] >= v {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	c := lo
	if c > 0 {
		below, above := v-table[c-1], table[c]-v
		if below < above || (below == above && (c-1)%2 == 0) {
			c--
		}
	}
	if c == 0 {
		return 0
	}
	return sign | uint8(c)
}

// WGMMAE4M3StepLoss bounds what Hopper's fp8 wgmma loses when it adds one
// k32 step of e4m3 products into its fp32 accumulator, relative to the
// products' magnitude Σ|a·b|: 4 · 2^-13, the worst the gate wgmma-acc
// measured on the H200 (3.63 · 2^-13 per step, 2026-12-02,
// results/h200-2026-12-02e) rounded up. The probe gate checks it
// (families/wgmmaacc) and the wgmma GEMMs' bound is built from it
// (families/gemm wgmmaFP8Acc), so both read this one value.
const WGMMAE4M3StepLoss = 0x1p-11

package refimpl

import "math"

// bf16 (1 sign, 8 exponent, 7 mantissa bits: float32's range) and IEEE fp16
// (1 sign, 5 exponent bits with bias 15, 10 mantissa bits, largest finite
// 65504) conversions.
//
// Encoding rounds to nearest, ties to even, directly from the input's exact
// value: F64ToBF16(x) is NOT F32ToBF16(float32(x)), which would round twice
// (the test pins a value where the two differ). Subnormals are produced and
// decoded exactly; values that round past the largest finite magnitude
// become ±Inf (IEEE overflow, unlike the saturating e4m3 contract); ±0 keeps
// its sign. Any NaN becomes the quiet NaN with the input's sign (bf16
// sign|0x7FC0, fp16 sign|0x7E00); device converts may return other NaN
// encodings (CUDA's canonical NaN is 0x7FFF), so compare NaNs by class, not
// by bits. Decoding is exact.

// F32ToBF16 rounds a float32 to bf16 bits. bf16 is float32's top half,
// so rounding to nearest even is adding 0x7FFF plus the kept half's lowest
// bit and truncating (a carry reaches the exponent, and Inf past the top);
// it equals encode16 on every float32, NaN included (the test sweeps it).
func F32ToBF16(x float32) uint16 {
	u := math.Float32bits(x)
	if u&0x7FFFFFFF > 0x7F800000 { // NaN: the quiet NaN with the input's sign
		return uint16(u>>16)&0x8000 | 0x7FC0
	}
	return uint16((u + 0x7FFF + (u>>16)&1) >> 16)
}

// F64ToBF16 rounds a float64 to bf16 bits (one rounding).
func F64ToBF16(x float64) uint16 { return encode16(x, 8, 7) }

// BF16ToF32 decodes bf16 bits (exact).
func BF16ToF32(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }

// BF16ToF64 decodes bf16 bits (exact).
func BF16ToF64(b uint16) float64 { return float64(BF16ToF32(b)) }

// F32ToF16 rounds a float32 to IEEE fp16 bits.
func F32ToF16(x float32) uint16 { return encode16(float64(x), 5, 10) }

// F64ToF16 rounds a float64 to IEEE fp16 bits (one rounding).
func F64ToF16(x float64) uint16 { return encode16(x, 5, 10) }

// F16ToF64 decodes IEEE fp16 bits (exact).
func F16ToF64(h uint16) float64 { return decode16(h, 5, 10) }

// F16ToF32 decodes IEEE fp16 bits (exact: every fp16 value is a float32).
func F16ToF32(h uint16) float32 { return float32(decode16(h, 5, 10)) }

// RoundBF16 returns x rounded to the nearest bf16 value, as a float64.
func RoundBF16(x float64) float64 { return BF16ToF64(F64ToBF16(x)) }

// RoundF16 returns x rounded to the nearest fp16 value, as a float64.
func RoundF16(x float64) float64 { return F16ToF64(F64ToF16(x)) }

// encode16 rounds x to a 16-bit binary format with ebits exponent bits and
// mbits mantissa bits (1+ebits+mbits == 16), working on the float64 bits so
// that there is exactly one rounding.
func encode16(x float64, ebits, mbits uint) uint16 {
	b := math.Float64bits(x)
	sign := uint16(b>>63) << 15
	a := b &^ (1 << 63)
	expMask := uint16(1<<ebits-1) << mbits
	switch {
	case a > 0x7FF0000000000000: // NaN
		return sign | expMask | 1<<(mbits-1)
	case a == 0x7FF0000000000000: // Inf
		return sign | expMask
	}
	bias := int64(1)<<(ebits-1) - 1
	e := int64(a>>52) - 1023 // float64 subnormals land far below any 16-bit subnormal
	if E := e + bias; E >= 1 {
		// Normal target: drop 52-mbits mantissa bits rounding to nearest
		// even; a carry ripples into the exponent, which is what rounding up
		// to the next binade needs, and past the top it reaches Inf.
		shift := 52 - mbits
		r := (a + (1<<(shift-1) - 1) + ((a >> shift) & 1)) >> shift
		r -= uint64(1023-bias) << mbits
		if r >= uint64(expMask) {
			return sign | expMask
		}
		return sign | uint16(r)
	} else {
		// Subnormal target: the value in units of the smallest subnormal
		// 2^(1-bias-mbits) is mant >> shift; round the dropped bits to even.
		// A result of 1<<mbits is the smallest normal, encoded correctly.
		shift := uint64(52 - int64(mbits) + 1 - E)
		if shift >= 54 { // below half the smallest subnormal: ±0
			return sign
		}
		mant := a&(1<<52-1) | 1<<52
		q := mant >> shift
		rem := mant & (1<<shift - 1)
		half := uint64(1) << (shift - 1)
		if rem > half || (rem == half && q&1 == 1) {
			q++
		}
		return sign | uint16(q)
	}
}

// decode16 is the exact value of a 16-bit binary-format code.
func decode16(h uint16, ebits, mbits uint) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	bias := 1<<(ebits-1) - 1
	e := int(h>>mbits) & (1<<ebits - 1)
	m := float64(h & (1<<mbits - 1))
	switch e {
	case 0:
		return sign * math.Ldexp(m, 1-bias-int(mbits))
	case 1<<ebits - 1:
		if m != 0 {
			return math.Copysign(math.NaN(), sign)
		}
		return math.Inf(int(sign))
	}
	return sign * math.Ldexp(m+float64(uint(1)<<mbits), e-bias-int(mbits))
}

// BF16Ulp is the spacing of bf16 values in the binade of x >= 0 (the
// subnormal spacing 2^-133 below the normal range).
func BF16Ulp(x float64) float64 {
	if x < 0x1p-126 {
		return 0x1p-133
	}
	_, e := math.Frexp(x) // x = f·2^e, f in [0.5, 1): binade 2^(e-1)
	return math.Ldexp(1, e-1-7)
}

// BF16RoundBound is how far one correctly rounded bf16 output may be from
// a reference ref when the value rounded is within e of it: half a bf16
// ulp of |v| <= |ref| + e, plus e. A second rounding has no room in it.
func BF16RoundBound(ref, e float64) float64 { return 0.5*BF16Ulp(math.Abs(ref)+e) + e }

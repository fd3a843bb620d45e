package refimpl

import "math"

// FMA32 returns a*b + c rounded once to float32 (to nearest, ties to even):
// the device fmaf. Go has no float32 FMA, and float32(float64(a)*float64(b)
// + float64(c)) rounds twice, which is wrong when the float64 sum lands on a
// float32 tie.
//
// Note: the product of two float32 is exact in float64, so a*b + c is the
// sum of two float64 values; TwoSum gives it exactly as hi + lo. Rounding
// hi+lo to odd in float64 (replace an even hi by its neighbour toward lo
// when lo != 0) and then to nearest float32 is a correct single rounding,
// because float64 carries at least 2·24+2 bits (Boldo and Melquiond, "When
// double rounding is odd", 2005). Subnormal float32 results are covered the
// same way. Most sums need none of it: the float64 sum converts directly
// unless it may sit on a float32 midpoint (fma32Near).
func FMA32(a, b, c float32) float32 {
	p := float64(float64(a) * float64(b)) // exact; the conversion only forbids fusing
	s := p + float64(c)
	if fma32Near(s) {
		s = fma32Odd(p, s, c)
	}
	return float32(s)
}

// fma32Near reports whether float32(s) may not be the single rounding of
// the exact sum s was rounded from. A second rounding can differ from one
// rounding only when s lies exactly halfway between two float32 values
// (every such midpoint is a float64, so a sum rounded to float64 cannot
// have crossed one). A midpoint has the bits float32 drops from s equal to
// 100...0: the low 29 bits in float32's normal range (and for Inf and NaN,
// which then take fma32Odd's own guard), more below it, where the float32
// grid is fixed at 2^-149 and s = 1.f x 2^e (e = -127..-150) drops its
// lowest 52-(e+149) bits (the implicit one counted for e = -150); below
// 2^-150 nothing is a midpoint.
func fma32Near(s float64) bool {
	u := math.Float64bits(s)
	e := int(u>>52&0x7FF) - 1023
	if e >= -126 {
		return u&(1<<29-1) == 1<<28
	}
	if e < -150 {
		return false
	}
	k := uint(-98 - e) // the midpoint bit; the bits below it are dropped too
	return (u|1<<52)&(1<<(k+1)-1) == 1<<k
}

// fma32Odd is p + c (p exact, s its float64 sum) rounded to odd in
// float64, whose float32 conversion is then the single rounding.
func fma32Odd(p, s float64, c float32) float64 {
	if math.IsInf(s, 0) || math.IsNaN(s) || math.IsInf(p, 0) {
		return s
	}
	// TwoSum (Knuth): s + e == p + c exactly.
	bv := s - p
	e := (p - (s - bv)) + (float64(c) - bv)
	if e != 0 && math.Float64bits(s)&1 == 0 {
		if e > 0 {
			s = math.Nextafter(s, math.Inf(1))
		} else {
			s = math.Nextafter(s, math.Inf(-1))
		}
	}
	return s
}

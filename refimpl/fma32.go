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
// same way.
func FMA32(a, b, c float32) float32 {
	p := float64(float64(a) * float64(b)) // exact; the conversion only forbids fusing
	s := p + float64(c)
	if math.IsInf(s, 0) || math.IsNaN(s) || math.IsInf(p, 0) {
		return float32(s)
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
	return float32(s)
}

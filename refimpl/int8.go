package refimpl

import "math"

// Int8Max is the largest int8 code magnitude used: the grid is symmetric,
// -127..127, and -128 is never produced.
const Int8Max = 127

// Int8Scale is the symmetric int8 scale of a block with largest magnitude
// amax: float32 amax / 127, one correctly rounded division.
func Int8Scale(amax float32) float32 { return amax / Int8Max }

// QuantizeInt8 is the int8 symmetric quantizer shared by the int8
// producers. In float32, with no other rounding:
//
//	q = x / scale              (correctly rounded division)
//	c = round-half-even(q)     (cvt.rni / v_rndne semantics)
//	c = clamp(c, -127, 127)
//
// NaN x, and scale == 0 (an all-zero block), give 0; ±Inf clamps to ±127.
// Note: ties go to even (2.5 → 2), not away from zero as C's roundf does;
// a kernel using roundf differs on exact ties, which the producer gate hits.
// The clamp is to ±127 explicitly: a saturating convert alone (.sat.s8)
// would let -128 through.
func QuantizeInt8(x, scale float32) int8 {
	if x != x || scale == 0 {
		return 0
	}
	q := x / scale
	if q != q { // Inf/Inf
		return 0
	}
	r := math.RoundToEven(float64(q))
	switch {
	case r > Int8Max:
		r = Int8Max
	case r < -Int8Max:
		r = -Int8Max
	}
	return int8(r)
}

package refimpl

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

func fmaExact(a, b, c float32) float32 {
	x := new(big.Float).SetPrec(0).SetFloat64(float64(a))
	x.SetPrec(1200).Mul(x, new(big.Float).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetFloat64(float64(c)))
	f, _ := x.Float32() // nearest, ties to even
	if x.Sign() == 0 {
		return float32(float64(a)*float64(b) + float64(c)) // exact zero: IEEE sign rules
	}
	return f
}

func TestFMA32Ties(t *testing.T) {
	a := float32(1 + 0x1p-12) // a*a = 1 + 2^-11 + 2^-24: a float32 tie
	for _, c := range []float32{0x1p-60, -0x1p-60, 0} {
		got, want := FMA32(a, a, c), fmaExact(a, a, c)
		if got != want {
			t.Errorf("FMA32(a, a, %g) = %x, want %x", c, math.Float32bits(got), math.Float32bits(want))
		}
	}
	if naive := float32(float64(a)*float64(a) + 0x1p-60); naive == fmaExact(a, a, 0x1p-60) {
		t.Error("test premise: the naive double rounding should be wrong here")
	}
}

func TestFMA32Random(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	f := func() float32 {
		switch rng.IntN(4) {
		case 0:
			return math.Float32frombits(rng.Uint32())
		case 1:
			return float32(rng.NormFloat64())
		case 2:
			return float32(rng.NormFloat64() * 1e-38) // subnormal results
		}
		return float32(1 + float64(rng.IntN(1<<12))*0x1p-12)
	}
	for i := 0; i < 200000; i++ {
		a, b, c := f(), f(), f()
		if rng.IntN(2) == 0 { // cancel: c near -a*b
			c = -float32(float64(a) * float64(b))
		}
		finite := func(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }
		if !finite(a) || !finite(b) || !finite(c) {
			continue
		}
		got, want := FMA32(a, b, c), fmaExact(a, b, c)
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("FMA32(%g, %g, %g) = %g (%#x), want %g (%#x)", a, b, c, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
}

// A float32-subnormal result whose float64 sum lands on a midpoint of the
// subnormal grid (odd multiples of 2^-150), where the normal-range
// midpoint test (the 29 low bits) does not see it: a*b = 2^-150 - 2^-190,
// c = 2^-130 + 2^-149 (an odd subnormal code), so s rounds to c + 2^-150
// and a direct conversion would tie to the even code above, while the
// exact sum lies below the midpoint.
func TestFMA32SubnormalTie(t *testing.T) {
	a := float32(0x1p-75 * (1 + 0x1p-20))
	b := float32(0x1p-75 * (1 - 0x1p-20))
	c := float32(0x1p-130 + 0x1p-149)
	got, want := FMA32(a, b, c), fmaExact(a, b, c)
	if got != want || want != c {
		t.Errorf("FMA32 = %#08x, exact %#08x, want c %#08x", math.Float32bits(got), math.Float32bits(want), math.Float32bits(c))
	}
	p := float64(a) * float64(b)
	if naive := float32(p + float64(c)); naive == want {
		t.Error("test premise: the direct conversion should round up here")
	}
	// The same sum negated, and in the other direction (above the midpoint).
	if got, want := FMA32(-a, b, -c), fmaExact(-a, b, -c); got != want {
		t.Errorf("negated: FMA32 = %#08x, exact %#08x", math.Float32bits(got), math.Float32bits(want))
	}
	// The same product on odd codes of every subnormal binade, up to the
	// last one below the normal range (c = (2^j + 1) 2^-149): from j = 13
	// on, s lands on the midpoint above c.
	for j := 1; j <= 22; j++ {
		c := float32(math.Ldexp(float64(int(1)<<j+1), -149))
		if got, want := FMA32(a, b, c), fmaExact(a, b, c); got != want {
			t.Errorf("c = (2^%d+1) 2^-149: FMA32 = %#08x, exact %#08x", j, math.Float32bits(got), math.Float32bits(want))
		}
	}
	a2 := float32(0x1p-75 * (1 + 0x1p-20))
	b2 := float32(0x1p-75 * (1 + 0x1p-20)) // a*b = 2^-150 + 2^-169 + 2^-190
	c2 := float32(0x1p-130)
	if got, want := FMA32(a2, b2, c2), fmaExact(a2, b2, c2); got != want {
		t.Errorf("above the midpoint: FMA32 = %#08x, exact %#08x", math.Float32bits(got), math.Float32bits(want))
	}
}

// Results in and near float32's subnormal range, where fma32Near's
// midpoint test changes width: products of full-mantissa values around
// 2^-150..2^-120 plus subnormal and tiny normal addends, cancellations
// included, against the exact rounding.
func TestFMA32SubnormalRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	mant := func() float64 { return 1 + rng.Float64() }
	for i := 0; i < 300000; i++ {
		ea, eb := -40-rng.IntN(50), -40-rng.IntN(70)
		a := float32(math.Ldexp(mant(), ea))
		b := float32(math.Ldexp(mant(), eb))
		var c float32
		switch rng.IntN(3) {
		case 0:
			c = math.Float32frombits(rng.Uint32() & 0x807FFFFF) // subnormal
		case 1:
			c = float32(math.Ldexp(mant(), -126-rng.IntN(24))) // a subnormal grid value with fewer bits
		default:
			c = -float32(float64(a)*float64(b)) + float32(math.Ldexp(float64(rng.IntN(8)-4), -149))
		}
		if rng.IntN(2) == 0 {
			a = -a
		}
		got, want := FMA32(a, b, c), fmaExact(a, b, c)
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("FMA32(%g, %g, %g) = %#08x, want %#08x", a, b, c, math.Float32bits(got), math.Float32bits(want))
		}
	}
}

package refimpl

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

func TestBF16HandCases(t *testing.T) {
	cases := []struct {
		x    float64
		want uint16
	}{
		{1, 0x3F80}, {-2, 0xC000}, {0, 0}, {math.Copysign(0, -1), 0x8000},
		{1 + 0x1p-8, 0x3F80},   // tie between 1 and 1+2^-7: even (1)
		{1 + 3*0x1p-8, 0x3F82}, // tie between 0x3F81 and 0x3F82: even
		{1 + 0x1p-8 + 0x1p-30, 0x3F81},
		{math.MaxFloat32, 0x7F80}, // rounds up past 0x7F7F: Inf
		{0x1.FEp127, 0x7F7F},      // largest finite bf16
		{math.Inf(1), 0x7F80}, {math.Inf(-1), 0xFF80},
		{math.NaN(), 0x7FC0}, {math.Copysign(math.NaN(), -1), 0xFFC0},
		{0x1p-133, 0x0001},                     // smallest subnormal
		{0x1p-134, 0x0000},                     // half of it: ties to even zero
		{-0x1p-134, 0x8000},                    // keeps the sign
		{0x1p-134 + 0x1p-160, 0x0001},          // just above half
		{0x1p-126, 0x0080},                     // smallest normal
		{0x1p-126 - 0x1p-134, 0x0080},          // rounds up into the normal range
		{3 * 0x1p-134, 0x0002},                 // 1.5 units: tie to even 2
		{0x1p-300, 0},                          // far below
		{math.SmallestNonzeroFloat64, 0},       // a float64 subnormal
		{-math.SmallestNonzeroFloat64, 0x8000}, // ... negative
	}
	for _, c := range cases {
		if got := F64ToBF16(c.x); got != c.want {
			t.Errorf("F64ToBF16(%g) = %#04x, want %#04x", c.x, got, c.want)
		}
	}
	if got := BF16ToF64(0x3F81); got != 1+0x1p-7 {
		t.Errorf("BF16ToF64(0x3F81) = %g", got)
	}
}

// A float64 just above a bf16 tie rounds up directly but to even through
// float32: F64ToBF16 must round once.
func TestBF16NoDoubleRounding(t *testing.T) {
	x := 1 + 0x1p-8 + 0x1p-30
	if F32ToBF16(float32(x)) != 0x3F80 {
		t.Fatalf("test premise: float32(%g) should land on the tie", x)
	}
	if got := F64ToBF16(x); got != 0x3F81 {
		t.Errorf("F64ToBF16(%g) = %#04x, want 0x3F81 (one rounding)", x, got)
	}
}

// bf16 from float32 (the bit trick) against the one-rounding encoder
// encode16, on random and boundary bit patterns, NaNs included.
func TestBF16FromF32BitTrick(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(u uint32) {
		f := math.Float32frombits(u)
		want := encode16(float64(f), 8, 7)
		if got := F32ToBF16(f); got != want {
			t.Fatalf("F32ToBF16(%#08x) = %#04x, want %#04x", u, got, want)
		}
	}
	for i := 0; i < 1<<20; i++ {
		u := rng.Uint32()
		check(u)
		check(u&0xFFFF0000 | 0x8000) // ties
		check(u&0xFFFF0000 | 0x7FFF)
		check(u&0xFFFF0000 | 0x8001)
	}
	for u := uint32(0); u < 1<<16; u++ { // float32 subnormals, the top, NaNs
		check(u)
		check(0x7F7F0000 | u)
		check(0x7F800000 | u)
		check(0xFF800000 | u)
	}
}

func TestBF16RoundTrip(t *testing.T) {
	for b := 0; b < 1<<16; b++ {
		f := BF16ToF32(uint16(b))
		if f != f {
			if got := F32ToBF16(f); got&0x7FFF != 0x7FC0 || got&0x8000 != uint16(b)&0x8000 {
				t.Errorf("NaN %#04x -> %#04x", b, got)
			}
			continue
		}
		if got := F32ToBF16(f); got != uint16(b) {
			t.Errorf("bf16 %#04x -> %g -> %#04x", b, f, got)
		}
		if got := F64ToBF16(BF16ToF64(uint16(b))); got != uint16(b) {
			t.Errorf("bf16 %#04x via float64 -> %#04x", b, got)
		}
	}
}

func TestF16HandCases(t *testing.T) {
	cases := []struct {
		x    float64
		want uint16
	}{
		{1, 0x3C00}, {-2, 0xC000}, {0.1, 0x2E66}, {65504, 0x7BFF},
		{65519.99, 0x7BFF}, {65520, 0x7C00}, // 65520 ties to the even "next" code: Inf
		{-1e6, 0xFC00}, {math.NaN(), 0x7E00}, {math.Copysign(math.NaN(), -1), 0xFE00},
		{0x1p-24, 0x0001}, {0x1p-25, 0}, {0x1.0001p-25, 0x0001}, {-0x1p-25, 0x8000},
		{3 * 0x1p-25, 0x0002}, // 1.5 units: tie to even 2
		{0x1p-14, 0x0400}, {0x1p-14 - 0x1p-25, 0x0400}, {0x1p-14 - 0x1p-24, 0x03FF},
		{1 + 0x1p-11, 0x3C00}, {1 + 3*0x1p-11, 0x3C02},
		{math.Copysign(0, -1), 0x8000},
	}
	for _, c := range cases {
		if got := F64ToF16(c.x); got != c.want {
			t.Errorf("F64ToF16(%g) = %#04x, want %#04x", c.x, got, c.want)
		}
	}
	if F16ToF64(0x7BFF) != 65504 || F16ToF64(0x0001) != 0x1p-24 || F16ToF64(0x3555) != 0.333251953125 {
		t.Errorf("fp16 decode wrong: %g %g %g", F16ToF64(0x7BFF), F16ToF64(0x0001), F16ToF64(0x3555))
	}
}

// Every fp16 encoding of a midpoint between neighbours and of the values
// just around it, against an independent nearest-value search.
func TestF16AgainstOracle(t *testing.T) {
	type v struct {
		x    float64
		code uint16
	}
	var vals []v
	for h := 0; h < 0x7C00; h++ {
		vals = append(vals, v{F16ToF64(uint16(h)), uint16(h)})
	}
	if !sort.SliceIsSorted(vals, func(i, j int) bool { return vals[i].x < vals[j].x }) {
		t.Fatal("fp16 decode is not monotonic")
	}
	for i := 0; i+1 < len(vals); i++ {
		lo, hi := vals[i], vals[i+1]
		mid := (lo.x + hi.x) / 2
		even := lo.code
		if lo.code&1 == 1 {
			even = hi.code
		}
		for _, c := range []struct {
			x    float64
			want uint16
		}{{mid, even}, {math.Nextafter(mid, 0), lo.code}, {math.Nextafter(mid, 1e9), hi.code}, {lo.x, lo.code}} {
			if got := F64ToF16(c.x); got != c.want {
				t.Fatalf("F64ToF16(%g) = %#04x, want %#04x", c.x, got, c.want)
			}
			if got := F64ToF16(-c.x); got != c.want|0x8000 {
				t.Fatalf("F64ToF16(%g) = %#04x, want %#04x", -c.x, got, c.want|0x8000)
			}
		}
	}
}

func TestF16RoundTrip(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := F16ToF64(uint16(h))
		got := F64ToF16(f)
		if f != f {
			if got&0x7FFF != 0x7E00 {
				t.Errorf("NaN %#04x -> %#04x", h, got)
			}
			continue
		}
		if got != uint16(h) {
			t.Errorf("fp16 %#04x -> %g -> %#04x", h, f, got)
		}
		if F32ToF16(F16ToF32(uint16(h))) != uint16(h) {
			t.Errorf("fp16 %#04x via float32 does not round-trip", h)
		}
	}
}

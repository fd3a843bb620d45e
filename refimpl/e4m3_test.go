package refimpl

import (
	"math"
	"testing"
)

func TestE4M3HandCases(t *testing.T) {
	cases := []struct {
		x    float32
		want uint8
	}{
		{0, 0}, {float32(math.Copysign(0, -1)), 0}, {1, 0x38}, {-1, 0xB8},
		{448, 0x7E}, {-448, 0xFE}, {1e9, 0x7E}, {float32(math.Inf(-1)), 0xFE},
		{float32(math.NaN()), 0}, {432, 0x7E}, // 432 ties between 416 (odd) and 448 (even)
		{424, 0x7D}, {0.001953125, 0x01}, // 2^-9
		{0.0009765625, 0}, {-0.0009765625, 0}, // 2^-10 ties to zero, never 0x80
		{0.0029296875, 0x02}, // 1.5*2^-9 ties to even 2
		{0.015625, 0x08},     // 2^-6 min normal
		{0.0146484375, 0x08}, // 7.5*2^-9 ties to 8 (even)
		{1.0625, 0x38},       // 1 + 1/16 ties to 1.0 (even mantissa 0)
		{1.1875, 0x3A},       // 1 + 3/16 ties to 1.25 (mantissa 2)
	}
	for _, c := range cases {
		if got := EncodeE4M3(c.x); got != c.want {
			t.Errorf("EncodeE4M3(%g) = %#02x, want %#02x", c.x, got, c.want)
		}
	}
}

func TestE4M3DecodeAll(t *testing.T) {
	table := E4M3OracleTable()
	for c := 0; c < 256; c++ {
		v := DecodeE4M3(uint8(c))
		mag := c & 0x7F
		if mag == 0x7F {
			if v == v {
				t.Errorf("code %#02x decodes to %g, want NaN", c, v)
			}
			continue
		}
		want := table[mag]
		if c&0x80 != 0 {
			want = -want
		}
		if float64(v) != want || math.Signbit(float64(v)) != (c&0x80 != 0) {
			t.Errorf("code %#02x decodes to %g, want %g", c, v, want)
		}
		if EncodeE4M3(v) != uint8(c) && c != 0x80 {
			t.Errorf("enc(dec(%#02x)) = %#02x", c, EncodeE4M3(v))
		}
	}
}

// TestE4M3OracleSample compares encoder and oracle on midpoints and their
// float32 neighbours, the places where rounding bugs live.
func TestE4M3OracleSample(t *testing.T) {
	table := E4M3OracleTable()
	for i := 0; i+1 < len(table); i++ {
		mid := float32((table[i] + table[i+1]) / 2)
		for _, x := range []float32{mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, 1000), table32(table[i]), -mid} {
			if got, want := EncodeE4M3(x), E4M3Oracle(x, table); got != want {
				t.Errorf("x=%g (%#08x): encoder %#02x oracle %#02x", x, math.Float32bits(x), got, want)
			}
		}
	}
}

func table32(v float64) float32 { return float32(v) }

func FuzzE4M3(f *testing.F) {
	table := E4M3OracleTable()
	for _, u := range []uint32{0, 0x3A800000, 0x43E00000, 0x7F800000, 0xFFC00001} {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, u uint32) {
		x := math.Float32frombits(u)
		if got, want := EncodeE4M3Bits(u), E4M3Oracle(x, table); got != want {
			t.Fatalf("bits %#08x: encoder %#02x oracle %#02x", u, got, want)
		}
	})
}

package refimpl

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestInt8HandCases(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	cases := []struct {
		x, scale float32
		want     int8
	}{
		{2.5, 1, 2}, {3.5, 1, 4}, {-2.5, 1, -2}, {-0.5, 1, 0}, {0.5000001, 1, 1},
		{200, 1, 127}, {-200, 1, -127}, {-127.5, 1, -127}, {nan, 1, 0}, {1, 0, 0},
		{inf, 1, 127}, {-inf, 1, -127}, {inf, inf, 0}, {63.5, 0.5, 127}, {1, 0.5, 2},
	}
	for _, c := range cases {
		if got := QuantizeInt8(c.x, c.scale); got != c.want {
			t.Errorf("QuantizeInt8(%g, %g) = %d, want %d", c.x, c.scale, got, c.want)
		}
	}
	if Int8Scale(254) != 2 {
		t.Errorf("Int8Scale(254) = %g", Int8Scale(254))
	}
}

// Pins the AWQ order: nibble i of a word holds column 8c + (0,2,4,6,1,3,5,7)[i].
func TestAWQHandCase(t *testing.T) {
	codes := []uint8{0, 1, 2, 3, 4, 5, 6, 7, 15, 9, 10, 11, 12, 13, 14, 8}
	words := PackAWQ(codes, 1, 16)
	// Word 0: columns 0..7 = 0..7 in nibbles col 0,2,4,6,1,3,5,7 -> 0x75316420.
	// Word 1: columns 8..15 = 15,9,10,11,12,13,14,8; nibbles in order
	// col 8,10,12,14,9,11,13,15 = F,A,C,E,9,B,D,8 -> 0x8DB9ECAF.
	hi := uint32(0x8DB9ECAF)
	want := []int32{0x75316420, int32(hi)}
	for i := range want {
		if words[i] != want[i] {
			t.Errorf("word %d = %#08x, want %#08x", i, uint32(words[i]), uint32(want[i]))
		}
	}
	if words[1] >= 0 {
		t.Errorf("nibble 7 = 8 must set the int32 sign bit")
	}
	back := UnpackAWQ(words, 1, 16)
	for i := range codes {
		if back[i] != codes[i] {
			t.Errorf("unpack column %d = %d, want %d", i, back[i], codes[i])
		}
		if AWQNibble(words, i) != codes[i] {
			t.Errorf("AWQNibble column %d = %d, want %d", i, AWQNibble(words, i), codes[i])
		}
	}
}

func TestAWQRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 20; trial++ {
		rows, n := 1+rng.IntN(5), 8*(1+rng.IntN(10))
		words := make([]int32, rows*n/8)
		for i := range words {
			words[i] = int32(rng.Uint32())
		}
		codes := UnpackAWQ(words, rows, n)
		again := PackAWQ(codes, rows, n)
		for i := range words {
			if again[i] != words[i] {
				t.Fatalf("pack(unpack(w)) word %d = %#x, want %#x", i, again[i], words[i])
			}
		}
		if got := UnpackAWQ(again, rows, n); string(got) != string(codes) {
			t.Fatalf("unpack(pack(c)) differs")
		}
	}
}

// randQWeight draws a random weight with realistic zeros and scales.
func randQWeight(rng *rand.Rand, K, N, bits int) *QWeight {
	G := K / GroupSize
	max := 1 << bits
	codes := make([]uint8, K*N)
	for i := range codes {
		codes[i] = uint8(rng.IntN(max))
	}
	zeros := make([]uint8, G*N)
	for i := range zeros {
		zeros[i] = uint8(2 + rng.IntN(max-4))
	}
	w := &QWeight{K: K, N: N, Bits: bits, Scales: make([]float64, G*N)}
	for i := range w.Scales {
		w.Scales[i] = RoundF16(1e-3 * math.Pow(10, rng.Float64()))
	}
	if bits == 4 {
		w.QWeight, w.QZeros = PackAWQ(codes, K, N), PackAWQ(zeros, G, N)
	} else {
		w.QWeight, w.QHigh = PackInt5(codes, K, N)
		w.QZeros, w.ZHigh = PackInt5(zeros, G, N)
	}
	return w
}

func TestDequantHandCase(t *testing.T) {
	K, N := 256, 8
	codes := make([]uint8, K*N)
	for i := range codes {
		codes[i] = 3
	}
	codes[0*N+2] = 8    // k=0, n=2: equals the zero
	codes[200*N+7] = 15 // k=200 (group 1), n=7
	zeros := []uint8{8, 8, 8, 8, 8, 8, 8, 8, 2, 2, 2, 2, 2, 2, 2, 14}
	w := &QWeight{K: K, N: N, Bits: 4, QWeight: PackAWQ(codes, K, N), QZeros: PackAWQ(zeros, 2, N), Scales: make([]float64, 2*N)}
	for i := range w.Scales {
		w.Scales[i] = 0.5
	}
	w.Scales[N+7] = 0.25
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n, k int
		want float64
	}{{0, 0, -2.5}, {2, 0, 0}, {3, 128, 0.5}, {7, 200, 0.25}, {7, 255, -2.75}} {
		if got := w.Dequant(c.n, c.k); got != c.want {
			t.Errorf("Dequant(n=%d, k=%d) = %g, want %g (zeros are raw, w = (q-z)*s)", c.n, c.k, got, c.want)
		}
	}
}

func TestMergeQWeights(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, bits := range []int{4, 5} {
		a, b := randQWeight(rng, 256, 64, bits), randQWeight(rng, 256, 32, bits)
		m, err := MergeQWeights(a, b)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		for k := 0; k < 256; k += 7 {
			for n := 0; n < 96; n++ {
				src, sn := a, n
				if n >= 64 {
					src, sn = b, n-64
				}
				if m.Dequant(n, k) != src.Dequant(sn, k) || m.Code(k, n) != src.Code(k, sn) {
					t.Fatalf("%d-bit merged (k=%d, n=%d) differs", bits, k, n)
				}
			}
		}
	}
	if _, err := MergeQWeights(randQWeight(rng, 128, 8, 4), randQWeight(rng, 256, 8, 4)); err == nil {
		t.Error("merging different K must fail")
	}
}

func TestQWeightValidate(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	w := randQWeight(rng, 256, 16, 4)
	w.QZeros = w.QZeros[:1]
	if err := w.Validate(); err == nil {
		t.Error("short qzeros accepted")
	}
	w = randQWeight(rng, 256, 32, 5)
	w.ZHigh = nil
	if err := w.Validate(); err == nil {
		t.Error("5-bit without zero plane accepted")
	}
}

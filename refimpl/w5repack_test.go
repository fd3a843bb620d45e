package refimpl

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

func randomW5(rng *rand.Rand, K, N int) *QWeight {
	G := K / GroupSize
	codes := make([]uint8, K*N)
	for i := range codes {
		codes[i] = uint8(rng.IntN(32))
	}
	zeros := make([]uint8, G*N)
	for i := range zeros {
		zeros[i] = uint8(rng.IntN(32))
	}
	ql, qh := PackInt5(codes, K, N)
	zl, zh := PackInt5(zeros, G, N)
	w := &QWeight{K: K, N: N, Bits: 5, QWeight: ql, QHigh: qh, QZeros: zl, ZHigh: zh, Scales: make([]float64, G*N)}
	for i := range w.Scales {
		w.Scales[i] = RoundF16(1e-3 + 1e-2*rng.Float64())
	}
	return w
}

// RepackW5 is lossless, puts each code's fifth bit in the plane byte of
// its word (byte word%4 of plane word word/4, bit = its nibble), keeps the
// low nibble where RepackW4 puts it, and writes d = z − 16.
func TestRepackW5(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	const K, N = 256, 64
	w := randomW5(rng, K, N)
	p, err := RepackW5(w)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("roundtrip", func(t *testing.T) {
		back, err := UnpackW5(p)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, w) {
			t.Fatal("UnpackW5(RepackW5(w)) != w")
		}
	})
	t.Run("fields", func(t *testing.T) {
		for k := 0; k < K; k++ {
			for n := 0; n < N; n++ {
				c := w.Code(k, n)
				wi, nib := W4Offset(k, n, K)
				if got := int(p.Words[wi] >> (4 * nib) & 15); got != c&15 {
					t.Fatalf("(%d,%d): low nibble %d, want %d", k, n, got, c&15)
				}
				if got := int(p.Planes[wi/4] >> (8*(wi%4) + nib) & 1); got != c>>4 {
					t.Fatalf("(%d,%d): plane bit %d, want %d", k, n, got, c>>4)
				}
			}
		}
		for g := 0; g < K/GroupSize; g++ {
			for n := 0; n < N; n++ {
				if d := int(int16(uint16(p.SZ[g*N+n] >> 16))); d != w.Zero(g, n)-16 {
					t.Fatalf("sz[%d,%d]: d=%d, want z-16=%d", g, n, d, w.Zero(g, n)-16)
				}
			}
		}
	})
	t.Run("rejects-4bit", func(t *testing.T) {
		w4 := &QWeight{K: K, N: N, Bits: 4, QWeight: w.QWeight, QZeros: w.QZeros, Scales: w.Scales}
		if _, err := RepackW5(w4); err == nil {
			t.Fatal("RepackW5 took a 4-bit weight")
		}
	})
}

package refimpl

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The repack is lossless: every field comes back bit for bit, on shapes
// with several column tiles and groups, zeros across the whole 0..15 range.
func TestRepackW4RoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 1))
	for _, sh := range [][2]int{{128, 16}, {256, 48}, {640, 128}, {3072, 64}} {
		K, N := sh[0], sh[1]
		w := randQWeight(rng, K, N, 4)
		// Extreme zeros too (randQWeight draws 2..13).
		zeros := UnpackAWQ(w.QZeros, K/GroupSize, N)
		zeros[0], zeros[len(zeros)-1] = 0, 15
		w.QZeros = PackAWQ(zeros, K/GroupSize, N)
		p, err := RepackW4(w)
		if err != nil {
			t.Fatal(err)
		}
		back, err := UnpackW4(p)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(back.QWeight, w.QWeight) || !slices.Equal(back.QZeros, w.QZeros) || !slices.Equal(back.Scales, w.Scales) {
			t.Fatalf("K=%d N=%d: UnpackW4(RepackW4(w)) != w", K, N)
		}
	}
}

// W4Offset is a bijection onto (word, nibble) and follows the documented
// fragment order on hand-picked elements.
func TestW4OffsetLayout(t *testing.T) {
	K, N := 256, 32
	seen := map[[2]int]bool{}
	for k := 0; k < K; k++ {
		for n := 0; n < N; n++ {
			w, nib := W4Offset(k, n, K)
			key := [2]int{w, nib}
			if seen[key] || w < 0 || w >= K*N/8 || nib < 0 || nib > 7 {
				t.Fatalf("(k=%d, n=%d) -> word %d nibble %d: duplicate or out of range", k, n, w, nib)
			}
			seen[key] = true
		}
	}
	G := K / GroupSize
	for _, c := range []struct{ k, n, word, nib int }{
		{0, 0, 0, 0},        // lane 0, step 0, local 0: nibble 0
		{1, 0, 0, 4},        // local 1: nibble 4 (pair 0)
		{2, 0, 0, 1},        // local 2: nibble 1
		{3, 0, 0, 5},        // local 3: nibble 5
		{16, 0, 0, 2},       // b1 half, local 4: nibble 2
		{19, 0, 0, 7},       // local 7: nibble 7
		{4, 0, 4, 0},        // tig 1: lane 1, word = 16 B / 4
		{32, 0, 1, 0},       // step 1
		{0, 1, 16, 0},       // column 1: lane 4
		{0, 8, 128, 0},      // h = 1: +512 B
		{128, 0, 256, 0},    // group 1: +1 KiB
		{0, 16, 256 * G, 0}, // second column tile
		{255, 31, (((1*G+1)*2+1)*512+(7*4+3)*16)/4 + 3, 7},
	} {
		w, nib := W4Offset(c.k, c.n, K)
		if w != c.word || nib != c.nib {
			t.Errorf("W4Offset(k=%d, n=%d) = (%d, %d), want (%d, %d)", c.k, c.n, w, nib, c.word, c.nib)
		}
	}
}

func TestRepackW4Rejects(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 2))
	w := randQWeight(rng, 128, 24, 4)
	if _, err := RepackW4(w); err == nil {
		t.Error("N=24 (not a multiple of 16) accepted")
	}
	w = randQWeight(rng, 128, 16, 4)
	w.Scales[3] = 1.0000001
	if _, err := RepackW4(w); err == nil {
		t.Error("a scale that is not an fp16 value accepted")
	}
	w5 := randQWeight(rng, 128, 32, 5)
	if _, err := RepackW4(w5); err == nil {
		t.Error("5-bit weights accepted")
	}
}

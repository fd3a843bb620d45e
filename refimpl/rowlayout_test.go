package refimpl

import (
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

var updateRow = flag.Bool("update", false, "rewrite testdata/rowlayout_k256_n16.golden")

// rowGoldenWeight is a hand-checkable weight: code (k, n) = (3k + 5n) mod
// 16, zero (g, n) = (n + g) mod 16, scale 2^-10·(1 + n).
func rowGoldenWeight() *QWeight {
	const K, N = 256, 16
	G := K / GroupSize
	codes, zeros := make([]uint8, K*N), make([]uint8, G*N)
	for k := 0; k < K; k++ {
		for n := 0; n < N; n++ {
			codes[k*N+n] = uint8((3*k + 5*n) % 16)
		}
	}
	w := &QWeight{K: K, N: N, Bits: 4, Scales: make([]float64, G*N)}
	for g := 0; g < G; g++ {
		for n := 0; n < N; n++ {
			zeros[g*N+n] = uint8((n + g) % 16)
			w.Scales[g*N+n] = float64(1+n) / 1024
		}
	}
	w.QWeight, w.QZeros = PackAWQ(codes, K, N), PackAWQ(zeros, G, N)
	return w
}

// The row layout's bytes for a small weight, one line per column (its K/2
// bytes in hex), then one line per group of scale words.
func TestRepackRowGolden(t *testing.T) {
	r, err := RepackRow(rowGoldenWeight())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# refimpl.RepackRow K=%d N=%d: code (k,n) = (3k+5n)%%16, byte n*K/2 + k/2, low nibble = even k\n", r.K, r.N)
	for n := 0; n < r.N; n++ {
		fmt.Fprintf(&b, "col %2d %s\n", n, hex.EncodeToString(r.Codes[n*r.K/2:(n+1)*r.K/2]))
	}
	for g := 0; g < r.K/GroupSize; g++ {
		fmt.Fprintf(&b, "sz g=%d", g)
		for n := 0; n < r.N; n++ {
			fmt.Fprintf(&b, " %08x", r.SZ[g*r.N+n])
		}
		b.WriteByte('\n')
	}
	path := filepath.Join("testdata", "rowlayout_k256_n16.golden")
	if *updateRow {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./refimpl -run TestRepackRowGolden -update writes it)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("RepackRow's bytes differ from %s:\n%s", path, b.String())
	}
	// Hand-checked bytes: column 0 starts with k = 0, 1 (codes 0, 3) ->
	// 0x30 and k = 2, 3 (6, 9) -> 0x96; column 1 with codes 5, 8 -> 0x85.
	for _, c := range []struct{ at, want int }{{0, 0x30}, {1, 0x96}, {r.K / 2, 0x85}} {
		if int(r.Codes[c.at]) != c.want {
			t.Errorf("byte %d = %#02x, want %#02x", c.at, r.Codes[c.at], c.want)
		}
	}
}

// RepackRow and RepackW4 describe the same codes, and RowFromW4 turns the
// fragment order into the same bytes, on shapes with several column tiles
// and groups.
func TestRowAndFragmentSameCodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 3))
	for _, sh := range [][2]int{{128, 16}, {256, 48}, {640, 128}} {
		K, N := sh[0], sh[1]
		t.Run(fmt.Sprintf("K=%d/N=%d", K, N), func(t *testing.T) {
			w := randQWeight(rng, K, N, 4)
			r, err := RepackRow(w)
			if err != nil {
				t.Fatal(err)
			}
			p, err := RepackW4(w)
			if err != nil {
				t.Fatal(err)
			}
			codes := UnpackAWQ(w.QWeight, K, N)
			for k := 0; k < K; k++ {
				for n := 0; n < N; n++ {
					wi, nib := W4Offset(k, n, K)
					frag := uint8(p.Words[wi]>>(4*nib)) & 0xF
					if got := r.Code(k, n); got != frag || got != codes[k*N+n] {
						t.Fatalf("(k=%d, n=%d): row code %d, fragment code %d, AWQ code %d", k, n, got, frag, codes[k*N+n])
					}
				}
			}
			if !bytes.Equal(r.SZBytes(), p.SZBytes()) {
				t.Error("the row layout's scale words differ from RepackW4's")
			}
			r2, err := RowFromW4(p)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(r2.Codes, r.Codes) {
				t.Error("RowFromW4(RepackW4(w)) != RepackRow(w)")
			}
		})
	}
}

func TestRepackRowRejects(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 4))
	if _, err := RepackRow(randQWeight(rng, 128, 24, 4)); err == nil {
		t.Error("N=24 (not a multiple of 16) accepted")
	}
	if _, err := RepackRow(randQWeight(rng, 128, 32, 5)); err == nil {
		t.Error("5-bit weights accepted")
	}
	if _, err := RowFromW4(&W4Packed{K: 100, N: 16}); err == nil {
		t.Error("RowFromW4: K=100 accepted")
	}
}

package checkpoint

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parharness/parharness/internal/golden"
	"github.com/parharness/parharness/refimpl"
)

// The int5 generator draws 5-bit codes and zeros in the plane layout.
func TestSyntheticInt5Statistics(t *testing.T) {
	l := SyntheticInt5(1024, 256, 7)
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	w := l.QWeightRef()
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	var codes [32]int
	high := 0
	for k := 0; k < l.K; k++ {
		for n := 0; n < l.N; n++ {
			c := w.Code(k, n)
			codes[c]++
			if c >= 16 {
				high++
			}
		}
	}
	total := float64(l.K * l.N)
	for c, m := range codes {
		if f := float64(m) / total; math.Abs(f-1.0/32) > 0.004 {
			t.Errorf("code %d drawn %.4f of the time, want about 1/32", c, f)
		}
	}
	if f := float64(high) / total; math.Abs(f-0.5) > 0.01 {
		t.Errorf("fifth bit set on %.3f of codes, want about 0.5", f)
	}
	sixteen, extreme := 0, 0
	for g := 0; g < l.K/128; g++ {
		for n := 0; n < l.N; n++ {
			switch z := w.Zero(g, n); {
			case z == 16:
				sixteen++
			case z < 4 || z > 28:
				extreme++
			}
		}
	}
	if f := float64(sixteen) / float64(l.K/128*l.N); math.Abs(f-0.38) > 0.04 {
		t.Errorf("zeros equal to 16: %.3f, want about 0.38", f)
	}
	if extreme == 0 {
		t.Error("no zero at the extremes 0, 1 or 31")
	}
}

func TestLoadLinearInt5RoundTrip(t *testing.T) {
	l := SyntheticInt5(256, 96, 2)
	path := writeLinear(t, l, nil)
	got, err := LoadLinear(path, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if got.Bits != 5 || got.K != 256 || got.N != 96 ||
		!slices.Equal(got.QWeight, l.QWeight) || !slices.Equal(got.QZeros, l.QZeros) ||
		!slices.Equal(got.QWeightHi, l.QWeightHi) || !slices.Equal(got.QZerosHi, l.QZerosHi) ||
		!slices.Equal(got.Scales, l.Scales) {
		t.Fatal("int5 linear did not round-trip")
	}
	// The loaded codes are the written ones, read the documented way.
	w, want := got.QWeightRef(), l.QWeightRef()
	for k := 0; k < l.K; k += 7 {
		for n := 0; n < l.N; n++ {
			if w.Code(k, n) != want.Code(k, n) || w.Code(k, n) != planeCode(got.QWeight, got.QWeightHi, got.N, k, n) {
				t.Fatalf("code (%d, %d): loaded %d, written %d, from the raw tensors %d", k, n, w.Code(k, n), want.Code(k, n), planeCode(got.QWeight, got.QWeightHi, got.N, k, n))
			}
		}
	}
	for g := 0; g < l.K/128; g++ {
		for n := 0; n < l.N; n++ {
			if w.Zero(g, n) != planeCode(got.QZeros, got.QZerosHi, got.N, g, n) {
				t.Fatalf("zero (%d, %d): %d, from the raw tensors %d", g, n, w.Zero(g, n), planeCode(got.QZeros, got.QZerosHi, got.N, g, n))
			}
		}
	}
}

// planeCode reads the 5-bit value of (row, n) from raw tensors by the
// format's text (docs/formats.md): the low nibble from AWQ word n/8, nibble
// i with ORDER[i] = n % 8; the fifth bit from plane word n/32, bit 8q + i
// with q = (n % 32) / 8.
func planeCode(low, high []int32, N, row, n int) int {
	order := []int{0, 2, 4, 6, 1, 3, 5, 7}
	i := slices.Index(order, n%8)
	lo := uint32(low[row*N/8+n/8]) >> (4 * i) & 15
	hi := uint32(high[row*N/32+n/32]) >> (8*((n%32)/8) + i) & 1
	return int(lo | hi<<4)
}

func TestLoadLinearInt5BadPlanes(t *testing.T) {
	base := func() *Linear { return SyntheticInt5(256, 64, 4) }
	cases := []struct {
		name   string
		l      *Linear
		mutate func([]*Tensor) []*Tensor
		want   []string
	}{
		{"qweight_hi missing", base(), replace("qweight_hi", nil), []string{prefix + "qweight_hi", "missing"}},
		{"qzeros_hi missing", base(), replace("qzeros_hi", nil), []string{prefix + "qzeros_hi", "missing"}},
		{"qweight_hi shape", base(), replace("qweight_hi", NewInt32("", []int{256, 4}, make([]int32, 1024))),
			[]string{prefix + "qweight_hi", "shape [256 4], want [256 2]"}},
		{"qweight_hi 1-D", base(), replace("qweight_hi", NewInt32("", []int{512}, make([]int32, 512))),
			[]string{prefix + "qweight_hi", "shape [512], want [256 2]"}},
		{"qzeros_hi shape", base(), replace("qzeros_hi", NewInt32("", []int{2, 1}, make([]int32, 2))),
			[]string{prefix + "qzeros_hi", "shape [2 1], want [2 2]"}},
		{"qzeros_hi dtype", base(), replace("qzeros_hi", NewInt16("", []int{2, 2}, make([]int16, 4))),
			[]string{prefix + "qzeros_hi", "dtype I16, want I32"}},
		{"planes with N not a multiple of 32", Synthetic(256, 48, 5), func(ts []*Tensor) []*Tensor {
			return append(ts, NewInt32(prefix+"qweight_hi", []int{256, 1}, make([]int32, 256)))
		}, []string{prefix + "qweight_hi", "N=48", "multiple of 32"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeLinear(t, c.l, c.mutate)
			_, err := LoadLinear(path, prefix)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	// A truncated file whose last tensor is qzeros_hi names it.
	t.Run("qzeros_hi truncated", func(t *testing.T) {
		path := writeLinear(t, base(), nil)
		raw, _ := os.ReadFile(path)
		os.WriteFile(path, raw[:len(raw)-3], 0o644)
		_, err := LoadLinear(path, prefix)
		if err == nil || !strings.Contains(err.Error(), "truncated") || !strings.Contains(err.Error(), prefix+"qzeros_hi") {
			t.Errorf("truncated: %v", err)
		}
	})
}

func TestValidateInt5Planes(t *testing.T) {
	cases := []struct {
		name string
		edit func(l *Linear)
		want string
	}{
		{"short code plane", func(l *Linear) { l.QWeightHi = l.QWeightHi[:len(l.QWeightHi)-1] }, "qweight_hi: 511 words, want K*N/32 = 512"},
		{"short zero plane", func(l *Linear) { l.QZerosHi = nil }, "qzeros_hi: 0 words, want K/128*N/32 = 4"},
		{"planes on a 4-bit linear", func(l *Linear) { l.Bits = 4 }, "a 4-bit linear carries fifth-bit planes"},
		{"6-bit", func(l *Linear) { l.Bits = 6 }, "6-bit weights"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := SyntheticInt5(256, 64, 3)
			l.Prefix = prefix
			c.edit(l)
			err := l.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), prefix) {
				t.Fatalf("Validate = %v, want an error naming %s and saying %q", err, prefix, c.want)
			}
		})
	}
}

// The int5 generator and writer are pinned by a golden file, and the
// stored planes read back as the format describes.
func TestSyntheticInt5Golden(t *testing.T) {
	l := SyntheticInt5(128, 32, 1)
	l.Prefix = "tiny5."
	var b bytes.Buffer
	if err := Encode(&b, l.Tensors(), nil); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join("testdata", "tiny-linear-int5.safetensors")
	golden.Check(t, file, b.Bytes())
	d, err := OpenDir(file)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	got, err := d.LoadLinear("tiny5.")
	if err != nil {
		t.Fatal(err)
	}
	if got.Bits != 5 || len(got.QWeightHi) != 128 || len(got.QZerosHi) != 1 {
		t.Fatalf("golden: %d-bit, planes of %d and %d words", got.Bits, len(got.QWeightHi), len(got.QZerosHi))
	}
	w := got.QWeightRef()
	seen := map[int]bool{}
	for k := 0; k < 128; k++ {
		for n := 0; n < 32; n++ {
			c := planeCode(got.QWeight, got.QWeightHi, 32, k, n)
			if w.Code(k, n) != c {
				t.Fatalf("code (%d, %d) = %d, the raw tensors say %d", k, n, w.Code(k, n), c)
			}
			seen[c] = true
		}
	}
	if len(seen) != 32 {
		t.Errorf("the golden holds %d distinct codes, want all 32", len(seen))
	}
	// Dequant is (q - z)·s with 5-bit q and z.
	for n := 0; n < 32; n++ {
		q, z, s := w.Code(5, n), w.Zero(0, n), refimpl.F16ToF64(got.Scales[n])
		if d := w.Dequant(n, 5); d != float64(q-z)*s {
			t.Fatalf("dequant (5, %d) = %g, want (%d - %d)·%g", n, d, q, z, s)
		}
	}
}

// FuzzLoadLinearInt5: no file makes the loader panic; every error is one
// line; a linear it accepts is consistent (its reference weight validates,
// every code and zero is 5-bit) and writes back to the same tensors.
//
//	go test ./checkpoint -run X -fuzz FuzzLoadLinearInt5 -fuzztime 60s
func FuzzLoadLinearInt5(f *testing.F) {
	l := SyntheticInt5(128, 32, 1)
	l.Prefix = "tiny5."
	var good bytes.Buffer
	if err := Encode(&good, l.Tensors(), nil); err != nil {
		f.Fatal(err)
	}
	f.Add(good.Bytes())
	for _, n := range []int{0, 8, 100, good.Len() / 2, good.Len() - 4} {
		f.Add(good.Bytes()[:n])
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		pf, err := Parse("fuzz", raw)
		if err != nil {
			return
		}
		d, err := NewDir("fuzz", pf)
		if err != nil {
			return
		}
		got, err := d.LoadLinear("tiny5.")
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		w := got.QWeightRef()
		if err := w.Validate(); err != nil {
			t.Fatalf("accepted linear: %v", err)
		}
		for k := 0; k < w.K; k++ {
			for n := 0; n < w.N; n++ {
				if c := w.Code(k, n); c < 0 || c >= 1<<got.Bits {
					t.Fatalf("accepted linear: code (%d, %d) = %d is not %d-bit", k, n, c, got.Bits)
				}
			}
		}
		for _, tn := range got.Tensors() {
			src, err := d.Tensor(tn.Name)
			if err != nil || !bytes.Equal(src.Data, tn.Data) || !slices.Equal(src.Shape, tn.Shape) {
				t.Fatalf("accepted linear: tensor %s does not write back as read (%v)", tn.Name, err)
			}
		}
	})
}

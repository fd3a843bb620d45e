package checkpoint

import (
	"gonum.org/v1/gonum/floats"

	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parharness/parharness/internal/golden"
)

const prefix = "model.layers.0.mlp.gate_proj."

func TestSyntheticStatistics(t *testing.T) {
	l := Synthetic(1024, 512, 7)
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	w := l.QWeightRef()
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	G := l.K / 128
	eight, mid, extreme := 0, 0, 0
	for g := 0; g < G; g++ {
		for n := 0; n < l.N; n++ {
			switch z := w.Zero(g, n); {
			case z == 8:
				eight++
			case z >= 2 && z <= 14:
				mid++
			default:
				extreme++
			}
		}
	}
	total := float64(G * l.N)
	if f := float64(eight) / total; math.Abs(f-0.38) > 0.03 {
		t.Errorf("zeros equal to 8: %.3f, want about 0.38", f)
	}
	if f := float64(extreme) / total; f > 0.04 || extreme == 0 {
		t.Errorf("zeros outside 2..14: %.3f, want a few percent", f)
	}
	for i, s := range w.Scales {
		if s < 0.99e-3 || s > 1.01e-2 {
			t.Fatalf("scale %d = %g outside 1e-3..1e-2", i, s)
		}
	}
	r := l.Rotation()
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	zero, sum2 := 0, 0.0
	for _, th := range r.Theta {
		if th == 0 {
			zero++
		}
		sum2 += th * th
	}
	if sd := math.Sqrt(sum2 / float64(len(r.Theta))); sd < 0.25 || sd > 0.35 || zero == 0 {
		t.Errorf("angles: sd %.3f, %d zero", sd, zero)
	}
	for i, c := range r.ChannelScales {
		if c <= 0 || c < 0.2 || c > 5 {
			t.Fatalf("channel scale %d = %g", i, c)
		}
	}
	// Seeded: the same seed gives the same linear, another seed another.
	if !slices.Equal(Synthetic(1024, 512, 7).QWeight, l.QWeight) || slices.Equal(Synthetic(1024, 512, 8).QWeight, l.QWeight) {
		t.Error("Synthetic is not a function of its seed")
	}
}

func writeLinear(t *testing.T, l *Linear, mutate func([]*Tensor) []*Tensor) string {
	t.Helper()
	l.Prefix = prefix
	ts := l.Tensors()
	if mutate != nil {
		ts = mutate(ts)
	}
	path := filepath.Join(t.TempDir(), "model.safetensors")
	if err := Write(path, ts, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadLinearRoundTrip(t *testing.T) {
	for _, l := range []*Linear{Synthetic(256, 64, 1), SyntheticInt5(256, 64, 2)} {
		path := writeLinear(t, l, nil)
		got, err := LoadLinear(path, prefix)
		if err != nil {
			t.Fatal(err)
		}
		if got.K != 256 || got.N != 64 || got.Krot != 8 || got.Bits != l.Bits ||
			!slices.Equal(got.QWeight, l.QWeight) || !slices.Equal(got.Pairs, l.Pairs) ||
			!slices.Equal(got.Theta, l.Theta) || !slices.Equal(got.Scales, l.Scales) ||
			!slices.Equal(got.QWeightHi, l.QWeightHi) || !slices.Equal(got.ChannelScales, l.ChannelScales) {
			t.Fatalf("%d-bit linear did not round-trip", l.Bits)
		}
		w := got.QWeightRef()
		if err := w.Validate(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoadLinearShards(t *testing.T) {
	l := Synthetic(256, 32, 3)
	l.Prefix = prefix
	ts := l.Tensors()
	dir := t.TempDir()
	Write(filepath.Join(dir, "a.safetensors"), ts[:3], nil)
	Write(filepath.Join(dir, "b.safetensors"), append(ts[3:], NewInt32("other.qweight", []int{128, 1}, make([]int32, 128))), nil)
	got, err := LoadLinear(dir, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.QZeros, l.QZeros) {
		t.Fatal("shards: qzeros differ")
	}
	d, _ := OpenDir(dir)
	defer d.Close()
	if p := d.LinearPrefixes(); !slices.Equal(p, []string{prefix, "other."}) {
		t.Errorf("LinearPrefixes = %v", p)
	}
}

func replace(name string, with *Tensor) func([]*Tensor) []*Tensor {
	return func(ts []*Tensor) []*Tensor {
		var out []*Tensor
		for _, x := range ts {
			if x.Name != prefix+name {
				out = append(out, x)
			} else if with != nil {
				with.Name = x.Name
				out = append(out, with)
			}
		}
		return out
	}
}

func TestLoadLinearBadInput(t *testing.T) {
	base := func() *Linear { return Synthetic(256, 32, 4) }
	badPairs := base()
	badPairs.Pairs[2*256+128+9] = 200
	dupPairs := base()
	dupPairs.Pairs[5*256+3] = dupPairs.Pairs[5*256+4]
	nanScale := base()
	nanScale.ChannelScales[17] = 0x7E00
	cases := []struct {
		name   string
		l      *Linear
		mutate func([]*Tensor) []*Tensor
		want   []string
	}{
		{"missing tensor", base(), replace("theta", nil), []string{prefix + "theta", "missing"}},
		{"mislabeled dtype", base(), replace("scales", NewBits16("", BF16, []int{2, 32}, make([]uint16, 64))),
			[]string{prefix + "scales", "dtype BF16, want F16"}},
		{"qweight dtype", base(), replace("qweight", &Tensor{DType: F32, Shape: []int{256, 4}, Data: make([]byte, 4096)}),
			[]string{prefix + "qweight", "dtype F32, want I32"}},
		{"wrong shape", base(), replace("qzeros", NewInt32("", []int{3, 4}, make([]int32, 12))),
			[]string{prefix + "qzeros", "shape [3 4], want [2 4]"}},
		{"wrong theta shape", base(), replace("theta", NewBits16("", F16, []int{8, 127}, make([]uint16, 8*127))),
			[]string{prefix + "theta", "shape [8 127], want [8 128]"}},
		{"channel scales 1-D", base(), replace("channel_scales", NewBits16("", F16, []int{256}, make([]uint16, 256))),
			[]string{prefix + "channel_scales", "want [1 256]"}},
		{"K not a multiple of 128", base(), replace("qweight", NewInt32("", []int{100, 4}, make([]int32, 400))),
			[]string{prefix + "qweight", "multiple of 128"}},
		{"out-of-range pair", badPairs, nil, []string{prefix + "pairs", "layer 2 group 1", "index 200", "out of 0..127"}},
		{"non-permutation", dupPairs, nil, []string{prefix + "pairs", "layer 5 group 0", "not a permutation"}},
		{"NaN channel scale", nanScale, nil, []string{prefix + "channel_scales", "element 17"}},
	}
	for _, c := range cases {
		path := writeLinear(t, c.l, c.mutate)
		_, err := LoadLinear(path, prefix)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", c.name, err, w)
			}
		}
	}
	// A truncated file names the tensor whose bytes are missing.
	path := writeLinear(t, base(), nil)
	raw, _ := os.ReadFile(path)
	os.WriteFile(path, raw[:len(raw)-100], 0o644)
	_, err := LoadLinear(path, prefix)
	if err == nil || !strings.Contains(err.Error(), "truncated") || !strings.Contains(err.Error(), prefix+"channel_scales") {
		t.Errorf("truncated: %v", err)
	}
}

// The generator and the writer are pinned by a golden file: a change to
// either shows up here (go test -update to accept it).
func TestSyntheticGolden(t *testing.T) {
	l := Synthetic(128, 8, 1)
	l.Prefix = "tiny."
	var b bytes.Buffer
	if err := Encode(&b, l.Tensors(), nil); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "tiny-linear.safetensors"), b.Bytes())
	d, err := OpenDir(filepath.Join("testdata", "tiny-linear.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	got, err := d.LoadLinear("tiny.")
	if err != nil {
		t.Fatal(err)
	}
	// The identity holds on the stored tensors.
	w, r := got.QWeightRef(), got.Rotation()
	x := make([]float64, 128)
	for i := range x {
		x[i] = float64(i%7) - 3
	}
	fx := append([]float64(nil), x...)
	r.Forward(fx)
	row := make([]float64, 128)
	for n := 0; n < 8; n++ {
		w.DequantRow(n, row)
		y1 := floats.Dot(fx, row)
		r.EffectiveRow(row)
		if y2 := floats.Dot(x, row); math.Abs(y1-y2) > 1e-12*math.Abs(y1) {
			t.Errorf("column %d: %g vs %g", n, y1, y2)
		}
	}
}

package refimpl

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// randRotation draws a valid rotation: random pair permutations, fp16
// angles ~ N(0, 0.3), fp16 channel scales around 1.
func randRotation(rng *rand.Rand, K, krot int) *Rotation {
	r := &Rotation{K: K, Krot: krot, Pairs: make([]int16, krot*K), Theta: make([]float64, krot*K/2), ChannelScales: make([]float64, K)}
	for l := 0; l < krot; l++ {
		for g := 0; g < K/GroupSize; g++ {
			perm := rng.Perm(GroupSize)
			for i, v := range perm {
				r.Pairs[l*K+g*GroupSize+i] = int16(v)
			}
		}
	}
	for i := range r.Theta {
		r.Theta[i] = RoundF16(0.3 * rng.NormFloat64())
	}
	for i := range r.ChannelScales {
		r.ChannelScales[i] = RoundF16(math.Exp(0.2 * rng.NormFloat64()))
	}
	return r
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// Pins the sign convention: x_i' = c x_i + s x_j, x_j' = -s x_i + c x_j.
func TestRotationSignConvention(t *testing.T) {
	r := IdentityRotation(128, 1)
	r.Theta[0] = math.Pi / 2 // pair 0 is (0, 1)
	x := make([]float64, 128)
	x[0] = 1
	r.Rotate(x)
	if !near(x[0], 0, 1e-15) || x[1] != -1 {
		t.Fatalf("rotating e0 by pi/2 gave (%g, %g), want (0, -1): j gets -s*x_i", x[0], x[1])
	}
	x = make([]float64, 128)
	x[1] = 1
	r.Rotate(x)
	if x[0] != 1 || !near(x[1], 0, 1e-15) {
		t.Fatalf("rotating e1 by pi/2 gave (%g, %g), want (1, 0): i gets +s*x_j", x[0], x[1])
	}
}

// Pins the layer order (0 first) with two layers whose pairs overlap.
func TestRotationLayerOrder(t *testing.T) {
	a, b := 0.7, -0.4
	r := IdentityRotation(128, 2)
	r.Theta[0] = a // layer 0, pair (0, 1)
	// layer 1: pairs (1,2), (0,3), (4,5), ...
	copy(r.Pairs[128:], []int16{1, 2, 0, 3})
	r.Theta[64] = b // layer 1, pair 0 = (1, 2)
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	x := make([]float64, 128)
	x[0] = 1
	r.Rotate(x)
	want := []float64{math.Cos(a), -math.Cos(b) * math.Sin(a), math.Sin(a) * math.Sin(b), 0}
	for i, w := range want {
		if !near(x[i], w, 1e-15) {
			t.Fatalf("x[%d] = %g, want %g (layers apply 0 then 1)", i, x[i], w)
		}
	}
	r.Unrotate(x)
	if !near(x[0], 1, 1e-15) || !near(x[1], 0, 1e-15) || !near(x[2], 0, 1e-15) {
		t.Fatalf("Unrotate did not undo: %v", x[:4])
	}
}

// Channel scales multiply before the rotation.
func TestRotationScaleFirst(t *testing.T) {
	r := IdentityRotation(128, 1)
	th := math.Pi / 3
	r.Theta[0] = th
	r.ChannelScales[0], r.ChannelScales[1] = 2, 3
	x := make([]float64, 128)
	x[0] = 1
	r.Forward(x)
	if !near(x[0], 2*math.Cos(th), 1e-15) || !near(x[1], -2*math.Sin(th), 1e-15) {
		t.Fatalf("Forward(e0) = (%g, %g), want (2c, -2s): scale, then rotate", x[0], x[1])
	}
}

// Pair indices are local to their group.
func TestRotationGroupLocal(t *testing.T) {
	r := IdentityRotation(256, 1)
	r.Theta[64] = math.Pi / 2 // group 1, pair 0 = local (0, 1) = features 128, 129
	x := make([]float64, 256)
	x[128], x[0] = 1, 5
	r.Rotate(x)
	if x[0] != 5 || !near(x[128], 0, 1e-15) || x[129] != -1 {
		t.Fatalf("group 1 pair rotated x0=%g x128=%g x129=%g", x[0], x[128], x[129])
	}
}

func TestRotationInverseProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for trial := 0; trial < 5; trial++ {
		r := randRotation(rng, 512, DefaultKrot)
		if err := r.Validate(); err != nil {
			t.Fatal(err)
		}
		x := make([]float64, 512)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		y := append([]float64(nil), x...)
		r.Forward(y)
		n0, n1 := norm2(x), 0.0
		r.Inverse(y)
		for i := range x {
			if !near(y[i], x[i], 1e-13) {
				t.Fatalf("Inverse(Forward(x))[%d] = %g, want %g", i, y[i], x[i])
			}
		}
		z := append([]float64(nil), x...)
		r.Rotate(z)
		n1 = norm2(z)
		if !near(n0, n1, 1e-12*n0) {
			t.Fatalf("Rotate changed the norm: %g -> %g", n0, n1)
		}
		r.Unrotate(z)
		for i := range x {
			if !near(z[i], x[i], 1e-13) {
				t.Fatalf("Unrotate(Rotate(x))[%d] = %g, want %g", i, z[i], x[i])
			}
		}
	}
}

// x · W_eff[n] == Forward(x) · w[n].
func TestEffectiveRowIdentity(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	r := randRotation(rng, 384, DefaultKrot)
	x, w := make([]float64, 384), make([]float64, 384)
	for i := range x {
		x[i], w[i] = rng.NormFloat64(), rng.NormFloat64()
	}
	fx := append([]float64(nil), x...)
	r.Forward(fx)
	lhs := 0.0
	for i := range fx {
		lhs += fx[i] * w[i]
	}
	r.EffectiveRow(w)
	rhs := 0.0
	for i := range x {
		rhs += x[i] * w[i]
	}
	if !near(lhs, rhs, 1e-12*math.Abs(lhs)) {
		t.Fatalf("Forward(x)·w = %g, x·W_eff = %g", lhs, rhs)
	}
}

func TestRotationValidate(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	r := randRotation(rng, 256, 8)
	r.Pairs[3*256+128+5] = 128
	err := r.Validate()
	if err == nil || !strings.Contains(err.Error(), "layer 3 group 1") || !strings.Contains(err.Error(), "out of 0..127") {
		t.Errorf("out-of-range pair: %v", err)
	}
	r = randRotation(rng, 256, 8)
	r.Pairs[2*256+7] = r.Pairs[2*256+8]
	err = r.Validate()
	if err == nil || !strings.Contains(err.Error(), "layer 2 group 0") || !strings.Contains(err.Error(), "not a permutation") {
		t.Errorf("duplicate pair: %v", err)
	}
}

func TestForwardPartitions(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	rots := []*Rotation{randRotation(rng, 128, 2), randRotation(rng, 128, 2)}
	M := 3
	x := make([]float64, M*128)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	out := ForwardPartitions(x, M, rots)
	for p, r := range rots {
		for m := 0; m < M; m++ {
			row := append([]float64(nil), x[m*128:(m+1)*128]...)
			r.Forward(row)
			for k := range row {
				if out[(p*M+m)*128+k] != row[k] {
					t.Fatalf("partition %d row %d differs", p, m)
				}
			}
		}
	}
}

func TestSameRotationAndMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	a := randRotation(rng, 128, 8)
	b := &Rotation{K: a.K, Krot: a.Krot, Pairs: append([]int16(nil), a.Pairs...), Theta: append([]float64(nil), a.Theta...), ChannelScales: append([]float64(nil), a.ChannelScales...)}
	if !SameRotation(a, b) {
		t.Fatal("copies differ")
	}
	b.Theta[100] = RoundF16(b.Theta[100] + 0.01)
	if SameRotation(a, b) {
		t.Fatal("different angle not noticed")
	}
	c := randRotation(rng, 128, 8)
	w := randQWeight(rng, 128, 64, 4)
	l := &Linear{W: w, Parts: []int{16, 16, 16, 16}, Rots: []*Rotation{a, a, b, c}}
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	m, err := l.MergeIdentical()
	if err != nil || len(m.Parts) != 3 || m.Parts[0] != 32 || m.Rots[1] != b {
		t.Fatalf("merge: %v %v", m.Parts, err)
	}
	if m.Partition(31) != 0 || m.Partition(32) != 1 || m.Partition(63) != 2 {
		t.Fatal("Partition wrong")
	}
	l.Rots = []*Rotation{a, b, c, a}
	if _, err := l.MergeIdentical(); err == nil {
		t.Fatal("4 distinct rotations accepted")
	}
}

package refimpl

import (
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestGEMMHandCase(t *testing.T) {
	K, N := 128, 8
	codes := make([]uint8, K*N)
	for i := range codes {
		codes[i] = 9
	}
	zeros := []uint8{8, 8, 8, 8, 8, 8, 8, 10}
	w := &QWeight{K: K, N: N, Bits: 4, QWeight: PackAWQ(codes, K, N), QZeros: PackAWQ(zeros, 1, N), Scales: make([]float64, N)}
	for i := range w.Scales {
		w.Scales[i] = 0.25
	}
	a := make([]float64, K)
	for i := range a {
		a[i] = 1
	}
	y := GEMMRef(a, 1, w, nil, Subset{})
	for n, v := range y {
		want := 32.0 // 128 * (9-8) * 0.25
		if n == 7 {
			want = -32
		}
		if v != want {
			t.Errorf("y[0,%d] = %g, want %g", n, v, want)
		}
	}
}

// naiveGEMM is the definition, element by element.
func naiveGEMM(a []float64, M int, w *QWeight, parts []int) []float64 {
	y := make([]float64, M*w.N)
	for n := 0; n < w.N; n++ {
		p := partitionOf(parts, n)
		for m := 0; m < M; m++ {
			s := 0.0
			for k := 0; k < w.K; k++ {
				s += a[(p*M+m)*w.K+k] * w.Dequant(n, k)
			}
			y[m*w.N+n] = s
		}
	}
	return y
}

func TestGEMMRefMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, bits := range []int{4, 5} {
		K, M := 256, 5
		parts := []int{320, 64, 96} // blocks span 256-column runs and partition edges
		w := randQWeight(rng, K, 480, bits)
		a := make([]float64, len(parts)*M*K)
		for i := range a {
			a[i] = rng.NormFloat64()
		}
		want := naiveGEMM(a, M, w, parts)
		got := GEMMRef(a, M, w, parts, Subset{})
		if e := RelErr(got, want); e > 1e-14 {
			t.Fatalf("%d-bit full: rel %g", bits, e)
		}
		sel := RandomSubset(M, w.N, 3, 50, 77)
		if sel.Rows[0] != 0 || sel.Rows[len(sel.Rows)-1] != M-1 || sel.Cols[len(sel.Cols)-1] != w.N-1 || len(sel.Cols) != 50 {
			t.Fatalf("subset %v misses an edge", sel)
		}
		gs := GEMMRef(a, M, w, parts, sel)
		if e := RelErr(gs, sel.Gather(want, M, w.N)); e > 1e-14 {
			t.Fatalf("%d-bit subset: rel %g", bits, e)
		}
		if d := sel.Describe(M, w.N); !strings.Contains(d, "3 of 5 rows") || !strings.Contains(d, "50 of 480 columns") {
			t.Errorf("Describe: %s", d)
		}
		// Partition p uses the activations of partition p: swapping them
		// must change the result.
		swapped := append([]float64(nil), a[M*K:2*M*K]...)
		swapped = append(swapped, a[:M*K]...)
		swapped = append(swapped, a[2*M*K:]...)
		if e := RelErr(GEMMRef(swapped, M, w, parts, Subset{}), want); e < 0.1 {
			t.Fatalf("partitions ignored: rel %g", e)
		}
	}
}

// naiveMags computes, by their definitions, GEMMRefWithMags' mag (the
// row-sum fold: |z − h|·|Σa|) and magAbs (|z − h|·Σ|a|), and the
// magnitude of the terms |s|·|q − z|·|a| of a kernel that takes the codes
// as q − z, which magAbs must bound.
func naiveMags(a []float64, M int, w *QWeight, parts []int) (mag, magAbs, termsCZ []float64) {
	h := 8
	if w.Bits == 5 {
		h = 16
	}
	abs := func(i int) float64 { return math.Abs(float64(i)) }
	mag, magAbs, termsCZ = make([]float64, M*w.N), make([]float64, M*w.N), make([]float64, M*w.N)
	for n := 0; n < w.N; n++ {
		p := partitionOf(parts, n)
		for m := 0; m < M; m++ {
			var sm, sa, sz float64
			for g := 0; g < w.Groups(); g++ {
				t, rs, ra, tz := 0.0, 0.0, 0.0, 0.0
				for k := g * GroupSize; k < (g+1)*GroupSize; k++ {
					av := a[(p*M+m)*w.K+k]
					t += abs(w.Code(k, n)-h) * math.Abs(av)
					rs += av
					ra += math.Abs(av)
					tz += abs(w.Code(k, n)-w.Zero(g, n)) * math.Abs(av)
				}
				as, zh := math.Abs(w.Scales[g*w.N+n]), abs(w.Zero(g, n)-h)
				sm += as * (t + zh*math.Abs(rs))
				sa += as * (t + zh*ra)
				sz += as * tz
			}
			mag[m*w.N+n], magAbs[m*w.N+n], termsCZ[m*w.N+n] = sm, sa, sz
		}
	}
	return mag, magAbs, termsCZ
}

// naiveMagUns computes, by its definition, GEMMRefWithMags' magUns (mag +
// h·|s|·(Σ|a| + |Σa|) per group) and the magnitude of the terms
// |s|·(q·|a| + z·|Σa|) of a kernel that sums the unsigned codes and folds
// z·Σa, which magUns must bound.
func naiveMagUns(a []float64, M int, w *QWeight, parts []int) (magUns, termsU []float64) {
	h := 8.0
	if w.Bits == 5 {
		h = 16
	}
	mag, _, _ := naiveMags(a, M, w, parts)
	magUns, termsU = make([]float64, M*w.N), make([]float64, M*w.N)
	for n := 0; n < w.N; n++ {
		p := partitionOf(parts, n)
		for m := 0; m < M; m++ {
			var su, st float64
			for g := 0; g < w.Groups(); g++ {
				t, rs, ra := 0.0, 0.0, 0.0
				for k := g * GroupSize; k < (g+1)*GroupSize; k++ {
					av := a[(p*M+m)*w.K+k]
					t += float64(w.Code(k, n)) * math.Abs(av)
					rs += av
					ra += math.Abs(av)
				}
				as := math.Abs(w.Scales[g*w.N+n])
				su += as * h * (ra + math.Abs(rs))
				st += as * (t + float64(w.Zero(g, n))*math.Abs(rs))
			}
			magUns[m*w.N+n], termsU[m*w.N+n] = mag[m*w.N+n]+su, st
		}
	}
	return magUns, termsU
}

func TestGEMMRefWithMagsRowSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, bits := range []int{4, 5} {
		K, M := 384, 5
		parts := []int{320, 64, 96}
		w := randQWeight(rng, K, 480, bits)
		a := make([]float64, len(parts)*M*K)
		for i := range a {
			a[i] = rng.NormFloat64()
		}
		wantMag, _, _ := naiveMags(a, M, w, parts)
		for _, sel := range []Subset{{}, RandomSubset(M, w.N, 3, 50, 78), {Cols: []int{1, 2, 3, 9, 321, 479}}} {
			ref, mag, _, _ := GEMMRefWithMags(a, M, w, parts, sel)
			plain := GEMMRef(a, M, w, parts, sel)
			want := sel.Gather(wantMag, M, w.N)
			for i := range ref {
				if ref[i] != plain[i] {
					t.Fatalf("%d-bit %v: ref[%d] = %g, GEMMRef %g", bits, sel, i, ref[i], plain[i])
				}
				if !(mag[i] >= math.Abs(ref[i])) {
					t.Fatalf("%d-bit %v: mag[%d] = %g < |ref| %g", bits, sel, i, mag[i], math.Abs(ref[i]))
				}
				if math.Abs(mag[i]-want[i]) > 1e-13*want[i] {
					t.Fatalf("%d-bit %v: mag[%d] = %.17g, definition %.17g", bits, sel, i, mag[i], want[i])
				}
			}
		}
	}
}

// TestGEMMRefMagCancellation: outputs whose terms cancel are tiny or zero,
// their magnitude is not.
func TestGEMMRefMagCancellation(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	K, N, M := 256, 16, 3
	w := randQWeight(rng, K, N, 4)
	zeros := make([]uint8, w.Groups()*N) // |z − 8| >= 2
	for i := range zeros {
		zeros[i] = uint8(2 + rng.IntN(5))
	}
	w.QZeros = PackAWQ(zeros, w.Groups(), N)
	a := make([]float64, M*K)
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	// Every code at its zero point: y = 0 exactly, mag = Σ_g |s|·|z − 8|
	// · (Σ_k |a| + |Σ_k a|).
	codes := make([]uint8, K*N)
	for k := 0; k < K; k++ {
		copy(codes[k*N:(k+1)*N], zeros[k/GroupSize*N:(k/GroupSize+1)*N])
	}
	wz := *w
	wz.QWeight = PackAWQ(codes, K, N)
	ref, mag, _, _ := GEMMRefWithMags(a, M, &wz, nil, Subset{})
	want, _, _ := naiveMags(a, M, &wz, []int{N})
	for i := range ref {
		if ref[i] != 0 || math.Abs(mag[i]-want[i]) > 1e-13*want[i] {
			t.Errorf("codes at the zero point: [%d] ref %g mag %g, want 0 and %g", i, ref[i], mag[i], want[i])
		}
	}
	// The gate's subnormal case: channel 0 of each group holds a ±1
	// activation against a weight at its zero point, the others are ~1e-7.
	for k := 0; k < K; k++ {
		for n := 0; n < N; n++ {
			if k%GroupSize != 0 {
				codes[k*N+n] = uint8(rng.IntN(16))
			}
		}
	}
	wz.QWeight = PackAWQ(codes, K, N)
	for i := range a {
		if i%GroupSize == 0 {
			a[i] = math.Copysign(1, a[i])
		} else {
			a[i] *= 1e-7
		}
	}
	ref, mag, _, _ = GEMMRefWithMags(a, M, &wz, nil, Subset{})
	for i := range ref {
		if !(math.Abs(ref[i]) < 1e-5*mag[i]) || ref[i] == 0 {
			t.Errorf("subnormal-like: [%d] ref %g mag %g, want 0 < |ref| << mag", i, ref[i], mag[i])
		}
	}
}

func TestRelErrAndFloor(t *testing.T) {
	if e := RelErr([]float64{3, 4}, []float64{3, 4}); e != 0 {
		t.Errorf("equal: %g", e)
	}
	if e := RelErr([]float64{3, 5}, []float64{3, 4}); e != 0.2 {
		t.Errorf("rel = %g, want 1/5", e)
	}
	// NaN compares false with everything, so "rel <= tol" fails, as it must.
	if e := RelErr([]float64{math.NaN(), 4}, []float64{3, 4}); e == e {
		t.Errorf("NaN output gave %g", e)
	}
	if e := RelErr([]float64{1, 0}, []float64{0, 0}); !math.IsInf(e, 1) {
		t.Errorf("zero ref: %g", e)
	}
	if e := RelErr([]float64{1e300, 1e300}, []float64{1e300, 1e300 * (1 + 1e-10)}); math.IsInf(e, 0) || e == 0 {
		t.Errorf("large values overflowed: %g", e)
	}
	// bf16(1 + 2^-9) = 1: error 2^-9 on a norm of ~1.
	f := Bf16Floor([]float64{1 + 0x1p-9})
	if want := 0x1p-9 / (1 + 0x1p-9); math.Abs(f-want) > 1e-18 {
		t.Errorf("Bf16Floor = %g, want %g", f, want)
	}
	if e := RelErrBF16([]uint16{0x3F80}, []float64{1}); e != 0 {
		t.Errorf("RelErrBF16 = %g", e)
	}
	s, n := FormatBad([]float64{1, 2, 3}, []float64{1, 2.5, 3}, 1e-3, 5)
	if n != 1 || !strings.Contains(s, "[1] got 2 want 2.5") {
		t.Errorf("FormatBad = %q, %d", s, n)
	}
}

// End to end at a small size: quantize rotated activations, run the
// reference, check it against the unquantized product.
func TestGEMMRefEndToEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	K, M := 512, 4
	parts := []int{64, 32}
	rots := []*Rotation{randRotation(rng, K, 8), randRotation(rng, K, 8)}
	w := randQWeight(rng, K, 96, 4)
	x := make([]float64, M*K)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	xr := ForwardPartitions(x, M, rots)
	x32 := make([]float32, len(xr))
	for i, v := range xr {
		x32[i] = float32(v)
	}
	q := QuantizeActGroup(x32, len(parts)*M, K)
	yq := GEMMRef(q.Dequant(), M, w, parts, Subset{})
	y := GEMMRef(xr, M, w, parts, Subset{})
	if e := RelErr(yq, y); e > 0.1 || e < 1e-4 {
		t.Fatalf("rel of e4m3 activations against exact: %g (expect a few percent)", e)
	}
}

func TestNorms(t *testing.T) {
	x := []float64{3, 4}
	w := []float64{0, 1}
	y := GemmaRMSNorm(x, w, 0)
	r := 1 / math.Sqrt(12.5)
	if !near(y[0], 3*r, 1e-15) || !near(y[1], 4*r*2, 1e-15) {
		t.Errorf("GemmaRMSNorm = %v", y)
	}
	y = GatedRMSNorm(x, []float64{0, 100}, []float64{2, 1}, 0)
	if y[0] != 0 || !near(y[1], 4*r*100, 1e-12) {
		t.Errorf("GatedRMSNorm = %v (silu(0) = 0, silu(100) ~ 100, w multiplies directly)", y)
	}
	y = GemmaRMSNorm([]float64{0, 0}, w, RMSNormEps)
	if y[0] != 0 || y[1] != 0 {
		t.Errorf("eps: %v", y)
	}
	if v := SiLUMul([]float64{1}, []float64{2}); !near(v[0], 2/(1+math.Exp(-1)), 1e-15) {
		t.Errorf("SiLUMul = %v", v)
	}
	if v := SigmoidGate([]float64{2}, []float64{0}); v[0] != 1 {
		t.Errorf("SigmoidGate = %v", v)
	}
}

// BenchmarkGEMMRefGateUp times the reference on the TP=2 gate_up shape at
// decode M = 64: N = 8704+8704, K = 5120 (11.4 GFLOP).
func BenchmarkGEMMRefGateUp(b *testing.B) {
	const M, K = 64, 5120
	parts := []int{8704, 8704}
	rng := rand.New(rand.NewPCG(1, 2))
	N := parts[0] + parts[1]
	w := &QWeight{K: K, N: N, Bits: 4, QWeight: make([]int32, K*N/8), QZeros: make([]int32, K/128*N/8), Scales: make([]float64, K/128*N)}
	for i := range w.QWeight {
		w.QWeight[i] = int32(rng.Uint32())
	}
	for i := range w.QZeros {
		w.QZeros[i] = int32(rng.Uint32())
	}
	for i := range w.Scales {
		w.Scales[i] = RoundF16(1e-3 + 9e-3*rng.Float64())
	}
	a := make([]float64, len(parts)*M*K)
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		GEMMRef(a, M, w, parts, Subset{})
	}
	per := time.Since(start).Seconds() / float64(b.N)
	b.ReportMetric(2*M*float64(N)*K/per/1e9, "GFLOP/s")
}

func TestGEMMRefWithMags(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, bits := range []int{4, 5} {
		K, M, parts := 384, 4, []int{64, 32}
		w := randQWeight(rng, K, 96, bits)
		a := make([]float64, len(parts)*M*K)
		for i := range a {
			a[i] = rng.NormFloat64()
		}
		ref, mag, magAbs, magUns := GEMMRefWithMags(a, M, w, parts, Subset{})
		plain := GEMMRef(a, M, w, parts, Subset{})
		wantMag, want, cz := naiveMags(a, M, w, parts)
		wantUns, tu := naiveMagUns(a, M, w, parts)
		for i := range ref {
			if math.Abs(magUns[i]-wantUns[i]) > 1e-12*wantUns[i] {
				t.Fatalf("%d-bit: magUns[%d] = %.17g, definition %.17g", bits, i, magUns[i], wantUns[i])
			}
			if !(magUns[i] >= mag[i]) || !(magUns[i] >= tu[i]*(1-1e-12)) {
				t.Fatalf("%d-bit: magUns[%d] = %g below mag %g or the unsigned-code terms %g", bits, i, magUns[i], mag[i], tu[i])
			}
			if ref[i] != plain[i] || math.Abs(mag[i]-wantMag[i]) > 1e-12*wantMag[i] {
				t.Fatalf("%d-bit: [%d] ref %g (GEMMRef %g), mag %g (definition %g)", bits, i, ref[i], plain[i], mag[i], wantMag[i])
			}
			if math.Abs(magAbs[i]-want[i]) > 1e-12*want[i] {
				t.Fatalf("%d-bit: magAbs[%d] = %.17g, definition %.17g", bits, i, magAbs[i], want[i])
			}
			if !(magAbs[i] >= mag[i]) || !(magAbs[i] >= cz[i]*(1-1e-12)) {
				t.Fatalf("%d-bit: magAbs[%d] = %g below mag %g or the q − z terms %g", bits, i, magAbs[i], mag[i], cz[i])
			}
		}
	}
}

// RandomSubset is stratified: exactly one index per stratum (so ascending
// and distinct), the first and last always in; with k = n/16 every 16-wide
// tile has one. WithCols adds columns and keeps the order.
func TestRandomSubsetStratified(t *testing.T) {
	for _, c := range []struct{ n, k int }{{17408, 17408 / 16}, {1000, 64}, {513, 64}, {100, 99}} {
		sel := RandomSubset(c.n, c.n, c.k, c.k, 9)
		for _, idx := range [][]int{sel.Rows, sel.Cols} {
			if idx[0] != 0 || idx[len(idx)-1] != c.n-1 {
				t.Fatalf("n=%d k=%d: ends %d, %d", c.n, c.k, idx[0], idx[len(idx)-1])
			}
			if len(idx) != c.k {
				t.Fatalf("n=%d k=%d: %d indices", c.n, c.k, len(idx))
			}
			for i, v := range idx { // index i lies in stratum i
				if lo, hi := i*c.n/c.k, (i+1)*c.n/c.k; v < lo || v >= hi {
					t.Fatalf("n=%d k=%d: index %d = %d outside its stratum [%d, %d)", c.n, c.k, i, v, lo, hi)
				}
			}
		}
	}
	sel := RandomSubset(1, 17408, 0, 17408/16, 3)
	for tile := 0; tile < 17408/16; tile++ {
		i := sort.SearchInts(sel.Cols, 16*tile)
		if i == len(sel.Cols) || sel.Cols[i] >= 16*(tile+1) {
			t.Fatalf("16-column tile %d has no checked column", tile)
		}
	}
	w := sel.WithCols(5, 17407, 6143, 6144)
	for _, c := range []int{5, 6143, 6144} {
		if i := sort.SearchInts(w.Cols, c); i == len(w.Cols) || w.Cols[i] != c {
			t.Fatalf("WithCols lost %d", c)
		}
	}
	if (Subset{}).WithCols(3).Cols != nil {
		t.Fatalf("WithCols on a full subset narrowed it")
	}
}

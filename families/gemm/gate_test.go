package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/kernels"
	"github.com/parharness/parharness/refimpl"
)

// TestGEMMElemBound pins the per-element criterion of checkGEMMOut.
func TestGEMMElemBound(t *testing.T) {
	const G = 40 // gate_up, K = 5120
	// (a) The H200 false failure (decode gate_up M=64, subnormal case,
	// m=14 n=12810): a tiny output of cancelling terms. The zeroed channel
	// of each group carries the row's largest activation against |z − 8|
	// in both the product and the row-sum fold, so mag is of the order of
	// the row scale (0.18..18 in TestGEMMCheckOutFP32Kernel's subnormal
	// case). The element passes from mag ~3.4e-4; 1e-3 is a low value.
	got, want := 5.075708031654358e-08, 4.571524354706445e-08
	if !gemmElemOK(got, want, 1e-3, G, 1, 0) {
		t.Errorf("subnormal-case element fails: |d| %g > bound %g", math.Abs(got-want), gemmElemBound(want, 1e-3, G, 1, 0))
	}
	// (b) A wrong group scale: an error of 2% of an output that is not
	// small against its terms.
	if gemmElemOK(1.02, 1.0, 40, G, 1, 0) {
		t.Errorf("a 2%% error on ref 1 (mag 40) passes: bound %g", gemmElemBound(1, 40, G, 1, 0))
	}
	// So does an error of a whole group's share on a cancelling output.
	if gemmElemOK(2e-3, 1e-3, 1, G, 1, 0) {
		t.Errorf("error 1e-3 at mag 1 passes: bound %g", gemmElemBound(1e-3, 1, G, 1, 0))
	}
	// (c) The output rounding: the correctly rounded value passes, and its
	// neighbours (one ulp off: what a second rounding or a truncation
	// gives) fail, at a mag that leaves no fp32 slack to speak of.
	for _, r0 := range []float64{1, -3.3e-3, 7.77e5, 1e-30} {
		b := refimpl.F64ToBF16(math.Abs(r0))
		ulp := refimpl.BF16ToF64(b+1) - refimpl.BF16ToF64(b)
		ref := math.Copysign(refimpl.BF16ToF64(b)+0.1*ulp, r0) // 0.1 ulp above a bf16 value
		mag := math.Abs(ref)
		if g := refimpl.RoundBF16(ref); !gemmElemOK(g, ref, mag, G, 1, 0) {
			t.Errorf("ref %g: the correctly rounded %g fails", ref, g)
		}
		for _, d := range []float64{1, -1} {
			if g := refimpl.RoundBF16(ref) + d*math.Copysign(ulp, ref); gemmElemOK(g, ref, mag, G, 1, 0) {
				t.Errorf("ref %g: %g, one ulp from the correct rounding, passes (bound %g)", ref, g, gemmElemBound(ref, mag, G, 1, 0))
			}
		}
	}
	if gemmElemOK(math.NaN(), 1, 1, G, 1, 0) || gemmElemOK(math.Inf(1), 1, 1, G, 1, 0) {
		t.Errorf("NaN or Inf passes")
	}
	// (d) The wgmma fp8 term: the H200 element of the first wgmma run
	// (down, outlier-heavy M=513, m=25 n=4913; mag is its row-sum
	// magnitude, which magAbs, what the gate uses for that kernel, is at
	// least) fails the fp32 bound and passes with wgmmaFP8Acc; a 2% error
	// on an output of modest cancellation (mag 10 x |ref|) still fails
	// with it.
	if gemmElemOK(0.41796875, 0.36365252000394577, 2704.328175010524, 68, 1, 0) {
		t.Errorf("the wgmma outlier element passes the fp32 bound (the test no longer pins the term)")
	}
	if !gemmElemOK(0.41796875, 0.36365252000394577, 2704.328175010524, 68, 1, wgmmaFP8Acc) {
		t.Errorf("the wgmma outlier element fails with wgmmaFP8Acc: bound %g", gemmElemBound(0.36365252000394577, 2704.328175010524, 68, 1, wgmmaFP8Acc))
	}
	if gemmElemOK(1.04, 1.0, 10, G, 1, wgmmaFP8Acc) {
		t.Errorf("a 4%% error on ref 1 (mag 10) passes the wgmma bound")
	}
	// The H200 element the 14-bit model missed (pq_gemm_pre_wg, K = 384
	// outlier, base seed 1796196076930159219, results/h200-2026-12-02e):
	// past 2^-11, within the measured 2^-9.
	if gemmElemOK(-3.5625, -3.5498644114138505, 9.144215233554343, 3, 1, 0x1p-11) {
		t.Errorf("the H200 element passes the old 14-bit term (the test no longer pins the change)")
	}
	if !gemmElemOK(-3.5625, -3.5498644114138505, 9.144215233554343, 3, 1, wgmmaFP8Acc) {
		t.Errorf("the H200 element fails wgmmaFP8Acc: bound %g", gemmElemBound(-3.5498644114138505, 9.144215233554343, 3, 1, wgmmaFP8Acc))
	}
}

// kernelFP32 emulates the decode kernel's float32 arithmetic (S = 1):
// T_g = Σ (c − 8)·code in fp32, the fold sc·T_g − sc·d·rs, the group sum
// scaled by asg, one bf16 rounding. It returns the output as the gate
// downloads it: [M + gemmRowsPast, N] bf16, the rows past M poisoned.
// scale(g, n) gives the scale the kernel reads (a fault may be injected).
func kernelFP32(w *refimpl.QWeight, q *refimpl.QuantAct, M int, scale func(g, n int) float64) []byte {
	G := w.Groups()
	return emulateFP32(w, q, M, scale, func(m, g int) float32 { return q.GroupScale[m*G+g] }, nil)
}

// emulateFP32 is the GEMMs' fp32 arithmetic: per group the fold
// sc·T_g − sc·d·rs, times groupScale(m, g), summed over the groups; then
// epilogue (nil: none) and one bf16 rounding.
func emulateFP32(w *refimpl.QWeight, q *refimpl.QuantAct, M int, scale func(g, n int) float64,
	groupScale func(m, g int) float32, epilogue func(m, n int, y float32) float32) []byte {
	K, N, G := w.K, w.N, w.Groups()
	out := make([]byte, 2*(M+gemmRowsPast)*N)
	for i := range out {
		out[i] = 0xFF
	}
	codes := refimpl.UnpackAWQ(w.QWeight, K, N)
	zeros := refimpl.UnpackAWQ(w.QZeros, G, N)
	for m := 0; m < M; m++ {
		for n := 0; n < N; n++ {
			var y float32
			for g := 0; g < G; g++ {
				var tg float32
				for k := g * refimpl.GroupSize; k < (g+1)*refimpl.GroupSize; k++ {
					tg += float32(int(codes[k*N+n])-8) * float32(q.CodeValue(m, k))
				}
				sc := float32(scale(g, n))
				scd := sc * float32(int(zeros[g*N+n])-8)
				f := sc*tg - scd*q.RowSums[m*G+g]
				y += groupScale(m, g) * f
			}
			if epilogue != nil {
				y = epilogue(m, n, y)
			}
			b := refimpl.F64ToBF16(float64(y))
			out[2*(m*N+n)], out[2*(m*N+n)+1] = byte(b), byte(b>>8)
		}
	}
	return out
}

// TestGEMMCheckOutFP32Kernel runs checkGEMMOut on an fp32 emulation of the
// kernel: the subnormal case that cancels (the H200 false failure) and the
// normal case pass, with a bound use (checkGEMMOut's return) of at most 1;
// a wrong group scale in one column fails the per-element check, with a
// bound use above 1.
func TestGEMMCheckOutFP32Kernel(t *testing.T) {
	const K, N, M = 5120, 64, 16
	for _, dist := range []string{"subnormal", "normal"} {
		c := gemmCase{"test", GemmShape{K: K, Parts: []int{N}}, M, dist, false}
		rng := rand.New(rand.NewPCG(5, 6))
		w := GateWeights(rng, K, N)
		if dist == "subnormal" {
			w = zeroFirstChannels(w)
		}
		xs := [][]float32{gemmActivations(rng, M, K, dist)}
		q := refimpl.QuantizeActGroup(xs[0], M, K)
		rr := gemmReference(c, 1, w, xs, []*refimpl.QuantAct{q})
		minRatio := math.Inf(1)
		for i, v := range rr.ref {
			minRatio = min(minRatio, rr.mag[i]/math.Abs(v))
		}
		t.Logf("%s: min mag/|ref| %.3g, mag %.3g..%.3g", dist, minRatio, minOf(rr.mag), maxOf(rr.mag))
		var use float64
		check := func(got []byte) gates.Result {
			return gates.RunGate(&gates.Env{}, gates.Gate{Name: "gemm-cpu", Run: func(tt *gates.T) {
				use = checkGEMMOut(tt, dist, gates.NewCase("dist", dist), got, M, N, rr)
			}})
		}
		good := kernelFP32(w, q, M, func(g, n int) float64 { return w.Scales[g*N+n] })
		if r := check(good); r.Status != gates.Pass || !(use > 0 && use <= 1) {
			t.Errorf("%s: fp32 kernel output: %v, bound use %g (want PASS, in (0, 1]): %v", dist, r.Status, use, r.Failures)
		}
		if dist != "normal" {
			continue
		}
		// Column 7 reads the scale of the next group in group 3.
		bad := kernelFP32(w, q, M, func(g, n int) float64 {
			if n == 7 && g == 3 {
				g++
			}
			return w.Scales[g*N+n]
		})
		r := check(bad)
		if r.Status != gates.Fail || !strings.Contains(strings.Join(r.Failures, "\n"), "sampled elements off by more than") || !(use > 1) {
			t.Errorf("a wrong group scale in one column is not caught per element: %v, bound use %g: %v", r.Status, use, r.Failures)
		}
		// The rows are checked in parallel; the element named first is
		// still the lowest row's (every row is wrong in column 7).
		if first := fmt.Sprintf("(first: m=%d n=7 ", rr.sel.RowsOf(M)[0]); !strings.Contains(strings.Join(r.Failures, "\n"), first) {
			t.Errorf("the first bad element named is not the lowest row's %q: %v", first, r.Failures)
		}
	}
}

func minOf(x []float64) float64 {
	v := math.Inf(1)
	for _, e := range x {
		v = min(v, e)
	}
	return v
}

func maxOf(x []float64) float64 {
	v := math.Inf(-1)
	for _, e := range x {
		v = max(v, e)
	}
	return v
}

// BenchmarkGEMMReference times the gate's host reference on its slowest
// decode case: gate_up (K=5120, N=8704+8704), M=64, 1024 sampled columns.
func BenchmarkGEMMReference(b *testing.B) {
	names, shs, err := GemmShapes("qwen38-27b-tp2")
	if err != nil {
		b.Fatal(err)
	}
	var c gemmCase
	for i, n := range names {
		if n == "gate_up" {
			c = gemmCase{n, shs[i], 64, "subnormal", false}
		}
	}
	if c.label == "" {
		b.Fatalf("no gate_up shape in %v", names)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	K, M, P := c.shape.K, c.M, len(c.shape.Parts)
	w := zeroFirstChannels(GateWeights(rng, K, c.shape.N()))
	xs := make([][]float32, P)
	qs := make([]*refimpl.QuantAct, P)
	var wg sync.WaitGroup
	for p := range xs {
		xs[p] = gemmActivations(rng, M, K, c.dist)
		wg.Add(1)
		go func() { defer wg.Done(); qs[p] = refimpl.QuantizeActGroup(xs[p], M, K) }()
	}
	wg.Wait()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		gemmReference(c, 3, w, xs, qs)
	}
}

// The quick GEMM cases include the synthetic prefill shapes at the wgmma
// kernel's pipeline edges (G = 3 < its stages, odd G = 5) and a
// subnormal-heavy prefill case, and every shape meets the prefill contract.
func TestGEMMCasesPipelineEdges(t *testing.T) {
	for _, full := range []bool{false, true} {
		cases, err := gemmCases(full, H200SMs)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		subPre := false
		for _, c := range cases {
			if err := c.shape.Check(PreBN); err != nil {
				t.Errorf("%s: %v", c.label, err)
			}
			if c.prefill {
				seen[c.shape.G()] = true
				subPre = subPre || c.dist == "subnormal"
			}
		}
		if !seen[3] || !seen[5] || !subPre {
			t.Errorf("full=%v: prefill G=3 %v, G=5 %v, subnormal prefill %v", full, seen[3], seen[5], subPre)
		}
	}
}

// refFor gives the fp8 wgmma accumulation term to every kernel whose
// sm_90a op is wgmma, with the magnitude of the products it sums: |q − z|
// for the prefill and the c − z decode classes, unsigned codes for the
// others (DecWGUnsigned); it leaves
// the mma.sync kernels' reference alone.
func TestRefForWGMMAKernels(t *testing.T) {
	rr := gemmRef{mag: []float64{1}, magAbs: []float64{2}, magUns: []float64{3}}
	for _, c := range []struct {
		kernel string
		acc    float64
		mag    float64
	}{{"pq_gemm_pre_wg", wgmmaFP8Acc, 2}, {"pq_gemm_dec_wg_m8", wgmmaFP8Acc, 3}, {"pq_gemm_dec_wg_m16", wgmmaFP8Acc, 3},
		{"pq_gemm_dec_wg_m32", wgmmaFP8Acc, 2}, {"pq_gemm_dec_wg_m64", wgmmaFP8Acc, 2},
		{"pq_gemm_dec_wk_m8", wgmmaFP8Acc, 3}, {"pq_gemm_dec_wk_m16", wgmmaFP8Acc, 3},
		{"pq_gemm_dec_wk_m32", wgmmaFP8Acc, 3}, {"pq_gemm_dec_wk_m64", wgmmaFP8Acc, 3},
		{"pq_gemm_dec_wk1_m8", wgmmaFP8Acc, 3}, {"pq_gemm_dec_wk1_m64", wgmmaFP8Acc, 3},
		{"pq_gemm_dec_m8", 0, 1}, {"pq_gemm_pre", 0, 1}} {
		t.Run(c.kernel, func(t *testing.T) {
			k, ok := kernels.Lookup(c.kernel)
			if !ok {
				t.Fatalf("%s is not registered", c.kernel)
			}
			got := refFor(rr, k)
			if got.opAcc != c.acc {
				t.Errorf("opAcc %g, want %g", got.opAcc, c.acc)
			}
			if got.mag[0] != c.mag {
				t.Errorf("mag %g, want %g", got.mag[0], c.mag)
			}
		})
	}
}

// firstBitDiff names the first differing element and the 16-column tiles
// and rows that differ: a race confined to one warp's tile reads as one
// tile.
func TestFirstBitDiff(t *testing.T) {
	const M, N = 3, 64
	want := make([]byte, 2*M*N)
	got := slices.Clone(want)
	for _, e := range []struct{ m, n int }{{1, 17}, {1, 31}, {2, 20}, {2, 63}} {
		got[2*(e.m*N+e.n)] = 1
	}
	msg := firstBitDiff(got, want, M, N, "the first launch")
	for _, w := range []string{"4 of 192 elements differ", "first m=1 n=17: 0x0001", "in 2 of 4 16-column tiles (j16 1 3)", "rows 1..2"} {
		if !strings.Contains(msg, w) {
			t.Errorf("%q lacks %q", msg, w)
		}
	}
	if msg := firstBitDiff(want, want, M, N, "x"); !strings.Contains(msg, "no element differs") {
		t.Errorf("identical outputs: %q", msg)
	}
}

// The norm allowance is 0 for fp32-accumulating kernels and opAcc times
// the relative norm of the magnitudes otherwise.
func TestWGMMANormAllowance(t *testing.T) {
	ref, mag := []float64{3, -4}, []float64{6, 8}
	if a := wgmmaNormAllowance(ref, mag, 0); a != 0 {
		t.Errorf("opAcc 0: allowance %g, want 0", a)
	}
	if a := wgmmaNormAllowance(ref, mag, 0x1p-9); math.Abs(a-2*0x1p-9) > 1e-18 {
		t.Errorf("allowance %g, want %g (||mag|| / ||ref|| = 2)", a, 2*0x1p-9)
	}
	if a := wgmmaNormAllowance([]float64{0, 0}, mag, 0x1p-9); a != 0 {
		t.Errorf("zero reference: allowance %g, want 0", a)
	}
}

package gemm

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/internal/coverage"
	"github.com/parharness/parharness/refimpl"
)

// Every 16x16 block of the output has a checked element: a row of the
// subset in its 16-row slab and a column in its 16-column slab, on every
// deployed shape and on M values around every tile and raster edge. A
// finite wrong value confined to one tile of the kernel's tiling (a
// multiple of 16 in both directions) cannot go unseen.
func TestSubsetHitsEveryOutputTile(t *testing.T) {
	var shs []GemmShape
	var names []string
	for _, set := range []string{"qwen38-27b-tp2", "qwen38-27b-tp1"} {
		n, s, err := GemmShapes(set)
		if err != nil {
			t.Fatal(err)
		}
		names, shs = append(names, n...), append(shs, s...)
	}
	for i, sh := range shs {
		for _, M := range []int{1, 17, 64, 65, 129, 200, 513, 1024, 1200, 8191, 8192} {
			c := gemmCase{names[i], sh, M, "normal", M > DecMaxM}
			t.Run(fmt.Sprintf("%s/M=%d", names[i], M), func(t *testing.T) {
				sel := gemmSubset(c, uint64(M))
				N := sh.N()
				hit := func(idx []int, n int) []bool {
					h := make([]bool, (n+gemmCheckTile-1)/gemmCheckTile)
					for _, v := range idx {
						h[v/gemmCheckTile] = true
					}
					return h
				}
				for what, h := range map[string][]bool{"row": hit(sel.RowsOf(M), M), "column": hit(sel.ColsOf(N), N)} {
					for s, ok := range h {
						if !ok {
							t.Fatalf("%s slab %d (of %d) has no checked %s", what, s, len(h), what)
						}
					}
				}
			})
		}
	}
}

// kernelFP32Pre emulates a prefill kernel's fp32 arithmetic
// (emulateFP32 with no group scale, then the token scale);
// doubleRound rounds the unscaled sum to bf16 first (a second rounding in
// the epilogue). corrupt may change the fp32 result of (m, n).
func kernelFP32Pre(w *refimpl.QWeight, q *refimpl.QuantAct, M int, doubleRound bool, corrupt func(m, n int, y float32) float32) []byte {
	N := w.N
	return emulateFP32(w, q, M, func(g, n int) float64 { return w.Scales[g*N+n] }, func(int, int) float32 { return 1 },
		func(m, n int, y float32) float32 {
			if doubleRound {
				y = float32(refimpl.RoundBF16(float64(y)))
			}
			y *= q.TokenScale[m]
			if corrupt != nil {
				y = corrupt(m, n, y)
			}
			return y
		})
}

// A second bf16 rounding in the prefill epilogue fails the pooled or the
// per-element check on every distribution (it used to pass both, caught
// only by the per-row check on a few rows), and a finite wrong value in one
// 16x16 block fails wherever the block is; the single-rounding emulation
// passes.
func TestGEMMChecksCatchDoubleRoundingAndOneWrongTile(t *testing.T) {
	const K, N, M = 1024, 256, 80
	for _, dist := range gemmDists {
		c := gemmCase{"test", GemmShape{K: K, Parts: []int{N}}, M, dist, true}
		rng := rand.New(rand.NewPCG(7, 8))
		w := GateWeights(rng, K, N)
		if dist == "subnormal" {
			w = zeroFirstChannels(w)
		}
		xs := [][]float32{gemmActivations(rng, M, K, dist)}
		q := refimpl.QuantizeActToken(xs[0], M, K)
		rr := gemmReference(c, 1, w, xs, []*refimpl.QuantAct{q})
		check := func(got []byte) gates.Result {
			return gates.RunGate(&gates.Env{}, gates.Gate{Name: "gemm-cpu", Run: func(tt *gates.T) {
				checkGEMMOut(tt, dist, gates.NewCase("dist", dist), got, M, N, rr)
			}})
		}
		t.Run(dist+"/single-rounding", func(t *testing.T) {
			if r := check(kernelFP32Pre(w, q, M, false, nil)); r.Status != gates.Pass {
				t.Fatalf("correct emulation fails: %v", r.Failures)
			}
		})
		t.Run(dist+"/double-rounding", func(t *testing.T) {
			r := check(kernelFP32Pre(w, q, M, true, nil))
			caught := false
			for _, f := range r.Failures {
				pooled := strings.Contains(f, ": rel ") && strings.Contains(f, "x floor")
				caught = caught || pooled || strings.Contains(f, "sampled elements")
			}
			if r.Status != gates.Fail || !caught {
				t.Fatalf("double rounding is not caught by the pooled or per-element check: %s %v", r.Status, r.Failures)
			}
		})
		for _, tile := range [][2]int{{0, 0}, {4, 15}, {2, 7}, {(M - 1) / 16, (N - 1) / 16}} {
			t.Run(fmt.Sprintf("%s/wrong-tile-%d-%d", dist, tile[0], tile[1]), func(t *testing.T) {
				got := kernelFP32Pre(w, q, M, false, func(m, n int, y float32) float32 {
					if m/16 == tile[0] && n/16 == tile[1] {
						return y * 1.03
					}
					return y
				})
				if r := check(got); r.Status != gates.Fail {
					t.Fatalf("a 3%% error in 16x16 block %v passes", tile)
				}
			})
		}
	}
}

// Every launch class the GEMMs reach over the deployed and synthetic
// shapes and M = 1..8192 (enumerated from the launch functions) has a case
// in each suite, on the H200's SM count and on a 64-CU gfx1201.
func TestSuitesCoverEveryLaunchClass(t *testing.T) {
	dom, err := gemmClassDomain()
	if err != nil {
		t.Fatal(err)
	}
	for _, full := range []bool{false, true} {
		for _, sms := range []int{H200SMs, 64} {
			t.Run(fmt.Sprintf("full=%t/sms=%d", full, sms), func(t *testing.T) {
				reach := coverage.Reachable(dom, func(c gemmCase) []string { return gemmCaseClasses(c, full, sms) })
				cases, err := gemmCases(full, sms)
				if err != nil {
					t.Fatal(err)
				}
				have := coverage.Of(cases, func(c gemmCase) []string { return gemmCaseClasses(c, full, sms) })
				if miss := coverage.Missing(reach, have); len(miss) > 0 {
					t.Fatalf("%d of %d launch classes have no case, e.g. %q", len(miss), len(reach), miss[0])
				}
				t.Logf("%d cases reach all %d classes", len(cases), len(reach))
			})
		}
	}
}

// The workspace is sized for a case's largest S: a launch at a smaller S
// that writes one fp32 element past its own partials is inside the
// allocation (canaries cannot see it) and must still fail.
func TestWorkspaceOverrunOfOneElement(t *testing.T) {
	const M, N = 5, 128
	ws := make([]byte, DecWorkspaceBytes(M, N, 8))
	for i := range ws {
		ws[i] = 0xFF
	}
	for i := 0; i < DecWorkspaceBytes(M, N, 3); i++ {
		ws[i] = 0
	}
	if err := wsPastExtent(ws, DecWorkspaceBytes(M, N, 3)); err != nil {
		t.Fatalf("a launch within its extent fails: %v", err)
	}
	ws[DecWorkspaceBytes(M, N, 3)] = 0 // one element past S=3's partials
	if err := wsPastExtent(ws, DecWorkspaceBytes(M, N, 3)); err == nil {
		t.Fatal("an overrun of one element passes")
	}
}

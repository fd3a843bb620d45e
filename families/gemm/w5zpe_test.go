package gemm

import (
	"math/rand/v2"
	"testing"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/refimpl"
)

// prefillEmu is an fp32 emulation of the tiled prefill kernels'
// arithmetic (per-token mode): per group tg = Σ (c − codeOff)·a in fp32,
// then the in-loop fold acc += sc·tg − sc·(z − zeroOff)·rs, or with zpe the
// fold acc += sc·tg and, after the loop, acc += Σ_g rs16·(−sc·d) in fp32
// (rs16 from round, the conversion of the row sums); then As·acc to bf16.
// lowOnly drops the codes' fifth bit (a W5 kernel that ignores the plane).
type prefillEmu struct {
	codeOff, zeroOff int
	lowOnly, zpe     bool
	round            func(float64) uint16
}

func (e prefillEmu) run(w *refimpl.QWeight, q *refimpl.QuantAct, M int) []byte {
	N, G := w.N, w.Groups()
	out := make([]byte, 2*(M+gemmRowsPast)*N)
	for i := range out {
		out[i] = 0xFF
	}
	for m := 0; m < M; m++ {
		for n := 0; n < N; n++ {
			var acc float32
			for g := 0; g < G; g++ {
				var tg float32
				for k := g * refimpl.GroupSize; k < (g+1)*refimpl.GroupSize; k++ {
					c := w.Code(k, n)
					if e.lowOnly {
						c &= 15
					}
					tg += float32(c-e.codeOff) * float32(q.CodeValue(m, k))
				}
				sc := float32(w.Scales[g*N+n])
				scd := sc * float32(w.Zero(g, n)-e.zeroOff)
				if e.zpe {
					acc = sc*tg + acc
				} else {
					acc = -scd*q.RowSums[m*G+g] + (sc*tg + acc)
				}
			}
			if e.zpe {
				for g := 0; g < G; g++ {
					sc := float32(w.Scales[g*N+n])
					scd := sc * float32(w.Zero(g, n)-e.zeroOff)
					rs16 := refimpl.F16ToF32(e.round(float64(q.RowSums[m*G+g])))
					acc += rs16 * -scd // exact product (hi + lo fp16 operands), fp32 add
				}
			}
			b := refimpl.F64ToBF16(float64(q.TokenScale[m] * acc))
			out[2*(m*N+n)], out[2*(m*N+n)+1] = byte(b), byte(b>>8)
		}
	}
	return out
}

func checkEmu(rr gemmRef, got []byte, M, N int) gates.Result {
	return gates.RunGate(&gates.Env{}, gates.Gate{Name: "gemm-emu", Run: func(tt *gates.T) {
		checkGEMMOut(tt, "emu", gates.NewCase("emu", "x"), got, M, N, rr)
	}})
}

// The W5 algebra: an fp32 emulation with codes and zeros as c − 16 and
// z − 16 passes the gemm5 gate's checks; one that ignores the plane bit, or
// takes the codes as c − 8 while the scale word's d is z − 16, fails.
func TestW5EmulationPassesPlantedBugsFail(t *testing.T) {
	const K, N, M = 1024, 64, 40
	for _, dist := range []string{"normal", "subnormal"} {
		c := gemmCase{"test", GemmShape{K: K, Parts: []int{N}}, M, dist, true}
		rng := rand.New(rand.NewPCG(7, 8))
		w := gemmWeights5(rng, K, N)
		if dist == "subnormal" {
			w = zeroFirstChannels(w)
		}
		xs := [][]float32{gemmActivations(rng, M, K, dist)}
		q := refimpl.QuantizeActToken(xs[0], M, K)
		rr := gemmReference(c, 1, w, xs, []*refimpl.QuantAct{q})
		for _, tc := range []struct {
			name string
			emu  prefillEmu
			pass bool
		}{
			{"c-16", prefillEmu{codeOff: 16, zeroOff: 16}, true},
			{"plane-ignored", prefillEmu{codeOff: 16, zeroOff: 16, lowOnly: true}, false},
			{"c-8-not-c-16", prefillEmu{codeOff: 8, zeroOff: 16}, false},
		} {
			t.Run(dist+"/"+tc.name, func(t *testing.T) {
				r := checkEmu(rr, tc.emu.run(w, q, M), M, N)
				if (r.Status == gates.Pass) != tc.pass {
					t.Fatalf("status %s, want pass=%t (%s %v)", r.Status, tc.pass, r.Reason, r.Failures)
				}
			})
		}
	}
}

// zpHeavyWeights is a 4-bit weight whose codes equal their zero point but
// for one in eight: the dequantized weights are mostly 0, so the output is
// small against the zero-point term, which then dominates the magnitude.
func zpHeavyWeights(rng *rand.Rand, K, N int) *refimpl.QWeight {
	w := GateWeights(rng, K, N)
	codes := refimpl.UnpackAWQ(w.QWeight, K, N)
	for k := 0; k < K; k++ {
		for n := 0; n < N; n++ {
			if rng.IntN(8) != 0 {
				codes[k*N+n] = uint8(w.Zero(k/refimpl.GroupSize, n))
			}
		}
	}
	w.QWeight = refimpl.PackAWQ(codes, K, N)
	return w
}

// truncF16 converts to fp16 rounding toward zero (the planted bug).
func truncF16(x float64) uint16 {
	h := refimpl.F64ToF16(x)
	if v := refimpl.F16ToF64(h); v != 0 && (v > x) == (x > 0) && v != x {
		h-- // one step toward zero (same sign, smaller magnitude)
	}
	return h
}

// The ZPE bound: the in-loop emulation passes against the plain reference,
// the ZPE emulation with round-to-nearest-even fp16 row sums against
// zpeRef, and with truncated row sums it fails on zero-point-heavy weights
// with all-positive activations (large row sums, far from fp16-exact).
func TestZPEEmulationPassesTruncatedRowSumsFail(t *testing.T) {
	const K, N, M = 1024, 64, 40
	rng := rand.New(rand.NewPCG(9, 10))
	w := zpHeavyWeights(rng, K, N)
	x := gemmActivations(rng, M, K, "normal")
	for i, v := range x {
		if v < 0 {
			x[i] = -v
		}
	}
	c := gemmCase{"test", GemmShape{K: K, Parts: []int{N}}, M, "normal", true}
	q := refimpl.QuantizeActToken(x, M, K)
	rr := gemmReference(c, 1, w, [][]float32{x}, []*refimpl.QuantAct{q})
	zr := zpeRef(rr, w, c.shape.Parts, q.RowSums, q.TokenScale, M)
	for _, tc := range []struct {
		name string
		rr   gemmRef
		emu  prefillEmu
		pass bool
	}{
		{"in-loop", rr, prefillEmu{codeOff: 8, zeroOff: 8}, true},
		{"zpe-rne", zr, prefillEmu{codeOff: 8, zeroOff: 8, zpe: true, round: refimpl.F64ToF16}, true},
		{"zpe-truncated", zr, prefillEmu{codeOff: 8, zeroOff: 8, zpe: true, round: truncF16}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := checkEmu(tc.rr, tc.emu.run(w, q, M), M, N)
			if (r.Status == gates.Pass) != tc.pass {
				t.Fatalf("status %s, want pass=%t (%s %v)", r.Status, tc.pass, r.Reason, r.Failures)
			}
		})
	}
}

// ZPERowSums lays the fp16 row sums out [P, Mpad, Gp], RNE, zeros past M
// and G.
func TestZPERowSumsLayout(t *testing.T) {
	const P, M, G = 2, 3, 5
	rs := make([]float32, P*M*G)
	for i := range rs {
		rs[i] = float32(i)*1.37 + 1000.3
	}
	b := ZPERowSums(rs, P, M, G)
	Mpad, Gp := refimpl.PadRows(M), ZPEGroupsPad(G)
	if len(b) != 2*P*Mpad*Gp {
		t.Fatalf("%d bytes, want %d", len(b), 2*P*Mpad*Gp)
	}
	for p := 0; p < P; p++ {
		for m := 0; m < Mpad; m++ {
			for g := 0; g < Gp; g++ {
				i := (p*Mpad+m)*Gp + g
				got := uint16(b[2*i]) | uint16(b[2*i+1])<<8
				want := uint16(0)
				if m < M && g < G {
					want = refimpl.F64ToF16(float64(rs[(p*M+m)*G+g]))
				}
				if got != want {
					t.Fatalf("p=%d m=%d g=%d: %#04x, want %#04x", p, m, g, got, want)
				}
			}
		}
	}
}

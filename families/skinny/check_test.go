package skinny

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/refimpl"
)

// The reference, the bound and the mirror on the CPU: the fp32 emulation
// of the kernel (Mirror) passes the gate's comparison on the deployed K
// (S = 20 slices) for every distribution; a reduce in the wrong slice
// order fails it by the mirror's bits alone (it is within the fp64
// bounds, which cannot see a reordering); a dropped slice, a second bf16
// rounding and a wrong element fail the fp64 bounds.

// outBytes lays an [M, N] bf16 result into a poisoned [M + rowsPast, N]
// output, as the device leaves it.
func outBytes(y []uint16, M, N int) []byte {
	b := make([]byte, 2*(M+rowsPast)*N)
	for i := range b {
		b[i] = 0xFF
	}
	copy(b, gates.U16Bytes(y))
	return b
}

// checkCase is one case's inputs, partials and reference.
type checkCase struct {
	s     Shape
	M     int
	parts []float32
	cr    *caseRef
}

func newCheckCase(t *testing.T, s Shape, M int, dist string, seed uint64) checkCase {
	t.Helper()
	w := genWeights(rand.New(rand.NewPCG(seed, 1)), s.N, s.K)
	if dist == "order" {
		w = orderWeights(w, s.N, s.K)
	}
	x := genActivations(rand.New(rand.NewPCG(seed, 2)), M, s.K, dist)
	return checkCase{s: s, M: M, parts: Partials(x, w, M, s.N, s.K), cr: newCaseRef(x, w, M, s)}
}

// verdict runs checkOut on y and returns its failures joined ("" when it passed).
func (c checkCase) verdict(y []uint16) string {
	var f gates.Findings
	checkOut(&f, "case", gates.NewCase("check", "test"), outBytes(y, c.M, c.s.N), c.M, c.s.N, c.cr)
	if err := f.Err(); err != nil {
		return err.Error()
	}
	return ""
}

func TestMirrorPassesTheGateCheck(t *testing.T) {
	s := Shape{"gdn_in_ba", 48, 5120}
	for i, dist := range dists {
		for _, M := range []int{1, 8, 17} {
			t.Run(fmt.Sprintf("%s/M=%d", dist, M), func(t *testing.T) {
				c := newCheckCase(t, s, M, dist, uint64(10*i+M))
				if got := Reduce(c.parts, s.S(), M, s.N); !slices.Equal(got, c.cr.mirror) {
					t.Fatal("Reduce(Partials) differs from Mirror")
				}
				if v := c.verdict(c.cr.mirror); v != "" {
					t.Errorf("the mirror fails the gate's check: %s", v)
				}
			})
		}
	}
}

func TestCheckCatchesWrongReduces(t *testing.T) {
	s := Shape{"gdn_in_ba", 48, 5120}
	S := s.S()
	normal, order := newCheckCase(t, s, 8, "normal", 3), newCheckCase(t, s, 8, "order", 3)
	seq := func(n int, f func(i int) int) []int {
		o := make([]int, n)
		for i := range o {
			o[i] = f(i)
		}
		return o
	}
	reversed := seq(S, func(i int) int { return S - 1 - i })
	for _, tc := range []struct {
		name string
		c    checkCase
		y    func(c checkCase) []uint16
		want []string // substrings the failures must contain ("": must pass)
	}{
		// On ordinary data a reordered fp32 sum is within the fp64 bounds
		// and almost never changes a bf16 output: the "order" data makes
		// visible any order that does not sum slices 0 and 1 first (one
		// that does, then the rest in another order, stays unseen).
		{"reversed slice order, normal data", normal, func(c checkCase) []uint16 { return ReduceOrder(c.parts, S, c.M, s.N, reversed) }, nil},
		{"reversed slice order, order data", order, func(c checkCase) []uint16 { return ReduceOrder(c.parts, S, c.M, s.N, reversed) },
			[]string{"differ from the mirror", "x their own bf16 floor"}},
		{"dropped slice", normal, func(c checkCase) []uint16 {
			return ReduceOrder(c.parts, S, c.M, s.N, seq(S-1, func(i int) int { return i }))
		},
			[]string{"off the fp64 reference", "differ from the mirror"}},
		{"partials rounded to bf16", normal, func(c checkCase) []uint16 {
			r := make([]float32, len(c.parts))
			for i, p := range c.parts {
				r[i] = refimpl.BF16ToF32(refimpl.F32ToBF16(p))
			}
			return Reduce(r, S, c.M, s.N)
		}, []string{"x floor", "off the fp64 reference"}},
		{"one element one ulp off", normal, func(c checkCase) []uint16 {
			y := append([]uint16{}, c.cr.mirror...)
			y[5*s.N+7]++
			return y
		}, []string{"differ from the mirror", "row m=5 column n=7"}},
		{"one element unwritten", normal, func(c checkCase) []uint16 {
			y := append([]uint16{}, c.cr.mirror...)
			y[3*s.N+40] = 0xFFFF
			return y
		}, []string{"NaN or unwritten (first at row m=3 column n=40"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.c.verdict(tc.y(tc.c))
			if tc.want == nil {
				if strings.Contains(v, "rel ") || strings.Contains(v, "fp64") || strings.Contains(v, "floor") {
					t.Errorf("outside the fp64 bounds: %s", v)
				}
				return
			}
			if v == "" {
				t.Fatal("passed the gate's check")
			}
			for _, w := range tc.want {
				if !strings.Contains(v, w) {
					t.Errorf("failures lack %q: %s", w, v)
				}
			}
		})
	}
	t.Run("row past M written", func(t *testing.T) {
		b := outBytes(normal.cr.mirror, normal.M, s.N)
		b[2*(normal.M*s.N+3)] = 0
		var f gates.Findings
		checkOut(&f, "case", gates.NewCase("check", "test"), b, normal.M, s.N, normal.cr)
		if err := f.Err(); err == nil || !strings.Contains(err.Error(), "row 8 (past M=8) was written at column 3") {
			t.Errorf("got %v", err)
		}
	})
}

// The negated reference (the bench's middle and last buffer sets) takes
// the mirror of the negated inputs, zeros of either sign included.
func TestNegatedReferenceIsTheNegatedInputsMirror(t *testing.T) {
	s := Shape{"n", 16, 512}
	w := genWeights(rand.New(rand.NewPCG(4, 1)), s.N, s.K)
	x := genActivations(rand.New(rand.NewPCG(4, 2)), 3, s.K, "normal")
	for i := 0; i < s.K; i += 2 { // exact cancellations: zero outputs in row 0
		x[i], x[i+1] = refimpl.F64ToBF16(1), refimpl.F64ToBF16(-1)
	}
	for n := 0; n < s.N; n++ {
		for k := 0; k < s.K; k += 2 {
			w[n*s.K+k+1] = w[n*s.K+k]
		}
	}
	cr := newCaseRef(x, w, 3, s)
	neg := func(b []uint16) []uint16 {
		out := make([]uint16, len(b))
		for i, v := range b {
			out[i] = v ^ 0x8000
		}
		return out
	}
	zeros := 0
	for _, b := range cr.mirror[:s.N] {
		if b&0x7FFF == 0 {
			zeros++
		}
	}
	if zeros == 0 {
		t.Fatal("row 0 should sum to exact zeros")
	}
	for _, in := range []string{"x", "w"} {
		nx, nw := x, w
		if in == "x" {
			nx = neg(x)
		} else {
			nw = neg(w)
		}
		y := Mirror(nx, nw, 3, s.N, s.K)
		var f gates.Findings
		checkOut(&f, "negated "+in, gates.NewCase("check", "test"), outBytes(y, 3, s.N), 3, s.N, cr.negated())
		if err := f.Err(); err != nil {
			t.Errorf("negated %s: %v", in, err)
		}
		checkOut(&f, "negated "+in+" against the plain reference", gates.NewCase("check", "test"), outBytes(y, 3, s.N), 3, s.N, cr)
		if f.Err() == nil {
			t.Errorf("negated %s passes against the plain reference", in)
		}
	}
}

// The kernel's reduce-scatter (lanes halving their values by the bits of
// their lane index, the partner's copy added, masks not selects) leaves
// each value's sum in the lanes slicePartial's tree says, with its bits:
// the mirror's tree is the kernel's.
func TestReduceScatterIsTheMirrorsTree(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, C := range []int{2, 4} {
		V := Rows * C
		var v [warpLanes][]float32
		for l := range v {
			v[l] = make([]float32, V)
			for i := range v[l] {
				v[l][i] = float32(rng.NormFloat64() * math.Ldexp(1, rng.IntN(20)-10))
			}
		}
		want := make([]float32, V)
		for i := range want {
			var lanes [warpLanes]float32
			for l := range lanes {
				lanes[l] = v[l][i]
			}
			for d := warpLanes / 2; d >= 1; d /= 2 {
				for l := 0; l < d; l++ {
					lanes[l] = lanes[l] + lanes[l+d]
				}
			}
			want[i] = lanes[0]
		}
		idx := make([]int, warpLanes)
		n := V
		for d := warpLanes / 2; d >= 1; d /= 2 {
			var next [warpLanes][]float32
			for l := range v {
				p := l ^ d
				if n == 1 {
					next[l] = []float32{v[l][0] + v[p][0]}
					continue
				}
				h := n / 2
				up := l&d != 0
				next[l] = make([]float32, h)
				for i := 0; i < h; i++ {
					// A lane keeps the half its bit names and adds the
					// partner's copy of it (the half the partner sends).
					keep, recv := v[l][i], v[p][i]
					if up {
						keep, recv = v[l][i+h], v[p][i+h]
					}
					next[l][i] = keep + recv
				}
				if up {
					idx[l] += h
				}
			}
			v = next
			n = max(n/2, 1)
		}
		for l := range v {
			if got := v[l][0]; math.Float32bits(got) != math.Float32bits(want[idx[l]]) {
				t.Errorf("C=%d lane %d: value %d is %g, the tree gives %g", C, l, idx[l], got, want[idx[l]])
			}
			if dup := warpLanes / V; idx[l] != l/dup {
				t.Errorf("C=%d lane %d holds value %d, the kernel stores it as %d", C, l, idx[l], l/dup)
			}
		}
	}
}

// F32ToBF16 (the mirror's rounding) is the kernels' bf16_rne on finite
// values: (u + 0x7FFF + ((u >> 16) & 1)) >> 16.
func TestMirrorRoundingIsBF16RNE(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < 1<<20; i++ {
		u := rng.Uint32()
		if i < 4 {
			u = []uint32{0x7F7FFFFF, 0x3F808000, 0x3F818000, 0x00008000}[i] // overflow to Inf, ties to even, a subnormal tie
		}
		if u&0x7F800000 == 0x7F800000 {
			continue
		}
		want := uint16((u + 0x7FFF + ((u >> 16) & 1)) >> 16)
		if got := refimpl.F32ToBF16(math.Float32frombits(u)); got != want {
			t.Fatalf("%#08x: F32ToBF16 %#04x, bf16_rne %#04x", u, got, want)
		}
	}
}

// slicePartial's shortcut (an exact bf16 product added, refimpl.FMA32 only
// below the normal range) is the kernel's fmaf chain: equal bits to a chain
// of FMA32 per lane, lane by lane, on normal products and on products that
// are subnormal or underflow to zero.
func TestSlicePartialIsTheFMAChain(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for _, scale := range []float64{1, 0x1p-66, 0x1p-75} { // normal, subnormal, underflowing products
		for trial := 0; trial < 200; trial++ {
			xs, ws := make([]float32, Slice), make([]float32, Slice)
			for i := range xs {
				xs[i] = refimpl.BF16ToF32(refimpl.F64ToBF16(rng.NormFloat64() * scale))
				ws[i] = refimpl.BF16ToF32(refimpl.F64ToBF16(rng.NormFloat64() * scale))
			}
			var lanes [warpLanes]float32
			for l := range lanes {
				for j := l * LaneK; j < (l+1)*LaneK; j++ {
					lanes[l] = refimpl.FMA32(xs[j], ws[j], lanes[l])
				}
			}
			for d := warpLanes / 2; d >= 1; d /= 2 {
				for l := 0; l < d; l++ {
					lanes[l] += lanes[l+d]
				}
			}
			if got := splitPartial(xs, ws, 1); math.Float32bits(got) != math.Float32bits(lanes[0]) {
				t.Fatalf("scale %g trial %d: splitPartial %g (%#08x), FMA32 chain %g (%#08x)", scale, trial, got, math.Float32bits(got), lanes[0], math.Float32bits(lanes[0]))
			}
		}
	}
}

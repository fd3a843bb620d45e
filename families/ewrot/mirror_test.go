package ewrot

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/refimpl"
	"github.com/parharness/parharness/shapes"
)

var update = flag.Bool("update", false, "rewrite testdata/mirror.golden")

// ulps is how many float32 values lie between got and want (same sign).
func ulps(got, want float32) int64 {
	a, b := int64(math.Float32bits(got)), int64(math.Float32bits(want))
	if d := a - b; d < 0 {
		return -d
	} else {
		return d
	}
}

// ExpF32 against math.Exp over every 53rd float32 of [-104, 89] (about 40
// million inputs): within ExpUlps ulps of the correctly rounded e^v where
// that is a normal float32, within ExpUlps subnormal steps plus the same
// relative error below, +Inf exactly where e^v rounds past MaxFloat32.
func TestExpF32Accuracy(t *testing.T) {
	if testing.Short() {
		t.Skip("dense sweep")
	}
	var worst int64
	var worstAt float32
	check := func(v float32) {
		got := ExpF32(v)
		exact := math.Exp(float64(v))
		want := float32(exact)
		switch {
		case math.IsInf(float64(want), 1):
			if !math.IsInf(float64(got), 1) && float64(got) < math.MaxFloat32*(1-1e-7) {
				t.Fatalf("ExpF32(%g) = %g, want +Inf", v, got)
			}
		case want < 0x1p-126:
			if d := math.Abs(float64(got) - exact); d > ExpUlps*tiny32+exact*ExpUlps*0x1p-23 {
				t.Fatalf("ExpF32(%g) = %g, e^v %g: |diff| %g past the subnormal bound", v, got, exact, d)
			}
		default:
			if u := ulps(got, want); u > worst {
				worst, worstAt = u, v
			}
		}
	}
	for _, sign := range []uint32{0, 0x80000000} {
		hi := uint32(0x42b20000) // 89
		if sign != 0 {
			hi = 0x42d00000 // 104
		}
		for b := uint32(0); b <= hi; b += 53 {
			check(math.Float32frombits(sign | b))
		}
	}
	if worst > ExpUlps {
		t.Fatalf("ExpF32 is %d ulps from e^v at v=%g, past ExpUlps=%d", worst, worstAt, ExpUlps)
	}
	t.Logf("worst %d ulp (at v=%g)", worst, worstAt)
}

// The kernel's EXP_* literals are the mirror's bits.
func TestExpConstantsMatchKernel(t *testing.T) {
	src, err := os.ReadFile("ewrot.hip")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float32{"EXP_LOG2E": expLog2E, "EXP_LN2_HI": expLn2Hi, "EXP_LN2_LO": expLn2Lo,
		"EXP_C7": expC[0], "EXP_C6": expC[1], "EXP_C5": expC[2], "EXP_C4": expC[3], "EXP_C3": expC[4]}
	re := regexp.MustCompile(`(?m)^#define (EXP_\w+) (\S+)f$`)
	seen := 0
	for _, m := range re.FindAllStringSubmatch(string(src), -1) {
		v, err := strconv.ParseFloat(m[2], 32)
		if err != nil {
			t.Fatalf("%s: %v", m[1], err)
		}
		w, ok := want[m[1]]
		if !ok {
			t.Errorf("ewrot.hip defines %s, which the mirror does not know", m[1])
			continue
		}
		if math.Float32bits(float32(v)) != math.Float32bits(w) {
			t.Errorf("%s: kernel %s = %#08x, mirror %#08x", m[1], m[2], math.Float32bits(float32(v)), math.Float32bits(w))
		}
		seen++
	}
	if seen != len(want) {
		t.Errorf("found %d of the %d EXP_* constants in ewrot.hip", seen, len(want))
	}
}

// Sigmoid and silu at the saturation edges: exact 0 and 1 where float32
// must give them, signed zero kept.
func TestSigmoidEdges(t *testing.T) {
	for _, c := range []struct{ v, want float32 }{{0, 0.5}, {200, 1}, {-200, 0}, {-89, 0}, {30, 1}} {
		if got := SigmoidF32(c.v); got != c.want {
			t.Errorf("SigmoidF32(%g) = %g, want %g", c.v, got, c.want)
		}
	}
	negZero := float32(math.Copysign(0, -1))
	if got := Elem(SiluMul, negZero, 1, 0, 0); math.Float32bits(got) != 0x80000000 {
		t.Errorf("silu(-0)·1 = %#08x, want -0", math.Float32bits(got))
	}
}

// The ops' mirrors against fp64 within OpBound, for every distribution
// (the gate ewrot-semantics runs the same check on its own cases).
func TestOpRowsWithinBound(t *testing.T) {
	for _, mode := range Modes {
		for _, dist := range Dists {
			t.Run(mode.String()+"/"+dist, func(t *testing.T) {
				c := newCase(mode, shapes.KP{K: 512, P: 1}, 16, dist)
				in := RandomInputs(rand.New(rand.NewPCG(3, uint64(mode))), c.Params, c.M, c.K, dist)
				var f gates.Findings
				worst := CheckOpRows(&f, c.String(), c.Params, in, OpRows(c.Params, in, c.M, c.K), c.M, c.K)
				if err := f.Err(); err != nil {
					t.Fatal(err)
				}
				t.Logf("worst error / bound %.3f", worst)
			})
		}
	}
}

// The codes of every op within the producers' e4m3 bound of the exact
// rotation.
func TestCodesWithinBound(t *testing.T) {
	for _, mode := range Modes {
		t.Run(mode.String(), func(t *testing.T) {
			pc, err := Prepare(5, newCase(mode, shapes.KP{K: 512, P: 2}, 5, "edge"), false)
			if err != nil {
				t.Fatal(err)
			}
			var f gates.Findings
			CheckCodes(&f, "codes", pc)
			if err := f.Err(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A mirror bug the semantics bound catches: sigmoid of the wrong sign, a
// dropped norm weight.
func TestBoundCatchesWrongOps(t *testing.T) {
	for _, c := range []struct {
		name string
		mode Mode
		elem func(Mode, float32, float32, float32, float32) float32
	}{
		{"sigmoid sign", SigmoidGate, func(_ Mode, a, b, _, _ float32) float32 { return bf16r(a * bf16r(SigmoidF32(-b))) }},
		{"norm weight dropped", GatedNorm, func(_ Mode, a, b, _, r float32) float32 { return bf16r((a * r) * (b * SigmoidF32(b))) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs := newCase(c.mode, shapes.KP{K: 256, P: 1}, 8, "normal")
			in := RandomInputs(rand.New(rand.NewPCG(9, 9)), cs.Params, cs.M, cs.K, "normal")
			var f gates.Findings
			CheckOpRows(&f, c.name, cs.Params, in, opRowsWith(cs.Params, in, cs.M, cs.K, c.elem, HeadRstd), cs.M, cs.K)
			if f.Err() == nil {
				t.Fatal("a wrong op passed the fp64 bound")
			}
		})
	}
}

// Bugs a kernel could have and the fp64 bound alone would not see (each is
// as accurate, or nearly): on the gate's inputs every one changes bytes of
// the op's rows, so the gate's byte compare against the mirror
// (CompareOut) fails. Not here: an exp or silu form one float32 ulp off
// (libm's expf, g/(1+e^-g)); silu is rounded to bf16 before use, so such a
// difference reaches a byte only at a bf16 tie, and 2M elements showed
// none. TestExpConstantsMatchKernel and the golden tie the exp instead.
func TestPlantedBugsFailMirrorCompare(t *testing.T) {
	for _, c := range []struct {
		name string
		mode Mode
		elem func(Mode, float32, float32, float32, float32) float32
		rstd func([]float32, float32) float32
	}{
		{"silu not rounded to bf16", SiluMul, func(_ Mode, a, b, _, _ float32) float32 { return bf16r((a * SigmoidF32(a)) * b) }, nil},
		{"sigmoid not rounded to bf16", SigmoidGate, func(_ Mode, a, b, _, _ float32) float32 { return bf16r(a * SigmoidF32(b)) }, nil},
		{"gated norm rounded twice", GatedNorm, func(_ Mode, a, b, w, r float32) float32 { return bf16r(bf16r((a*r)*w) * (b * SigmoidF32(b))) }, nil},
		{"gated norm gate first", GatedNorm, func(_ Mode, a, b, w, r float32) float32 { return bf16r((a * r) * (w * (b * SigmoidF32(b)))) }, nil},
		{"head sum in row order", GatedNorm, nil, func(xs []float32, eps float32) float32 {
			var S float32
			for _, v := range xs {
				S = S + float32(v*v)
			}
			return 1 / sqrt32(S/float32(len(xs))+eps)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			elem, rstd := Elem, HeadRstd
			if c.elem != nil {
				elem = c.elem
			}
			if c.rstd != nil {
				rstd = c.rstd
			}
			// 64 rows of 3072: the head-sum order moves r by an ulp or so,
			// which changes a bf16 byte only near a tie.
			cs := newCase(c.mode, shapes.KP{K: 3072, P: 1}, 64, "normal")
			bad := 0
			for _, dist := range Dists {
				in := RandomInputs(rand.New(rand.NewPCG(1, uint64(c.mode))), cs.Params, cs.M, cs.K, dist)
				var f gates.Findings
				want := gates.U16Bytes(OpRows(cs.Params, in, cs.M, cs.K))
				got := gates.U16Bytes(opRowsWith(cs.Params, in, cs.M, cs.K, elem, rstd))
				CompareOut(&f, "rows", got, want, 2, func(i int) string { return fmt.Sprint(i) })
				if f.Err() != nil {
					bad++
				}
			}
			if bad == 0 {
				t.Fatal("the planted bug leaves every byte of the op's rows as the mirror has them")
			}
		})
	}
}

// The mirror's bytes for fixed inputs, per op (rows and every producer
// output), against testdata/mirror.golden (go test -update rewrites it):
// a change of rounding points or op order shows here even where the device
// is not at hand.
func TestMirrorGolden(t *testing.T) {
	var lines []string
	for _, mode := range Modes {
		for _, dist := range Dists {
			pc, err := Prepare(42, newCase(mode, shapes.KP{K: 512, P: 2}, 19, dist), true)
			if err != nil {
				t.Fatal(err)
			}
			w := pc.Want
			for _, o := range []struct {
				name string
				b    []byte
			}{{"rows", w.Rows}, {"group_codes", w.GroupCodes}, {"group_scales", w.GroupScales}, {"group_rsum", w.GroupRSums},
				{"tok_codes", w.TokCodesRow}, {"tok_codes_tiled", w.TokCodesTiled}, {"tok_scales", w.TokScales}, {"tok_rsum", w.TokRSums}} {
				lines = append(lines, fmt.Sprintf("%s %s %s %x", mode, dist, o.name, sha256.Sum256(o.b)))
			}
		}
	}
	got := strings.Join(lines, "\n") + "\n"
	path := filepath.Join("testdata", "mirror.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run TestMirrorGolden -update writes it)", err)
	}
	if string(want) != got {
		t.Fatalf("mirror bytes differ from %s:\n%s", path, diffLines(string(want), got))
	}
}

func diffLines(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := 0; i < max(len(al), len(bl)); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			out = append(out, "- "+x, "+ "+y)
		}
	}
	return strings.Join(out, "\n")
}

// BuildWant's producer outputs equal refimpl's whole-matrix functions on
// the op's rows (the serial definition), so the parallel blocks change
// nothing.
func TestWantEqualsSerialMirror(t *testing.T) {
	pc, err := Prepare(7, newCase(SiluMul, shapes.KP{K: 384, P: 3}, 37, "normal"), true)
	if err != nil {
		t.Fatal(err)
	}
	y := OpRows(pc.Params, pc.In, pc.M, pc.K)
	var codes, gs, tok, tiled []byte
	for p := 0; p < pc.P; p++ {
		v := pc.RR.RotateF32(y, pc.M, p)
		g := refimpl.QuantizeActGroup(v, pc.M, pc.K)
		codes, gs = append(codes, g.Codes...), append(gs, gates.F32Bytes(g.GroupScale)...)
		_, f := refimpl.RoundRowsBF16(v)
		q := refimpl.QuantizeActToken(f, pc.M, pc.K)
		tok, tiled = append(tok, q.Codes...), append(tiled, refimpl.TileRows(q.Codes, pc.M, pc.K)...)
	}
	for _, c := range []struct {
		name      string
		got, want []byte
	}{{"group codes", pc.Want.GroupCodes, codes}, {"group scales", pc.Want.GroupScales, gs}, {"token codes", pc.Want.TokCodesRow, tok}, {"tiled codes", pc.Want.TokCodesTiled, tiled}} {
		if string(c.got) != string(c.want) {
			t.Errorf("%s differ from the serial mirror", c.name)
		}
	}
}

package i8

import (
	"math"
	"testing"

	"github.com/parharness/parharness/gates"
	"github.com/parharness/parharness/refimpl"
)

// quantizer is a kernel's int8 encode as a test plants it: how it rounds
// v/scale and where it clamps.
type quantizer struct {
	name  string
	round func(float64) float64
	clamp float64
}

var (
	rightQuantizer = quantizer{"round-half-even clamp 127", math.RoundToEven, 127}
	plantedBugs    = []quantizer{
		{"round-half-away-from-zero", math.Round, 127},
		{"clamp at 128", math.RoundToEven, 128},
	}
)

// code is one code of v/scale as a kernel with quantizer qz writes it.
func (qz quantizer) code(v, scale float32) byte {
	if scale == 0 {
		return 0
	}
	q := v / scale
	if q != q {
		return 0
	}
	r := math.Max(-qz.clamp, math.Min(qz.clamp, qz.round(float64(q))))
	return byte(int8(int32(r))) // a code of 128 wraps to 0x80, as a byte store of the int would
}

// emulateGroup is what a per-group kernel with quantizer qz writes as codes
// for one case, written independently of the mirror: amax, scale =
// amax/127, codes.
func emulateGroup(in *prodInputs, M int, qz quantizer) []byte {
	K, P := in.rr.K, in.rr.P
	out := make([]byte, 0, P*M*K)
	for p := 0; p < P; p++ {
		v := in.rr.RotateF32(in.x, M, p)
		out = append(out, quantize(v, M, K, false, qz)...)
	}
	return out
}

// emulateToken is the per-token kernel's row-major codes: on pass A's bf16
// rows, As = max over groups of amax_g/127.
func emulateToken(in *prodInputs, M int, qz quantizer) []byte {
	K, P := in.rr.K, in.rr.P
	out := make([]byte, 0, P*M*K)
	for p := 0; p < P; p++ {
		_, f := refimpl.RoundRowsBF16(in.rr.RotateF32(in.x, M, p))
		out = append(out, quantize(f, M, K, true, qz)...)
	}
	return out
}

func quantize(v []float32, M, K int, perToken bool, qz quantizer) []byte {
	G := K / refimpl.GroupSize
	out := make([]byte, M*K)
	for m := 0; m < M; m++ {
		sc := make([]float32, G)
		var as float32
		for g := range sc {
			var a float32
			for _, x := range v[m*K+g*128 : m*K+(g+1)*128] {
				a = max(a, float32(math.Abs(float64(x))))
			}
			sc[g] = a / 127
			as = max(as, sc[g])
		}
		for k := 0; k < K; k++ {
			s := sc[k/128]
			if perToken {
				s = as
			}
			out[m*K+k] = qz.code(v[m*K+k], s)
		}
	}
	return out
}

// The mirror equals an independent emulation of the contract, and the
// gate's byte compare fails a kernel that rounds ties away from zero or
// clamps at 128, on the gate's own ties cases, per group and per token.
func TestPlantedQuantizerBugsFailMirrorCompare(t *testing.T) {
	for _, c := range []prodCase{{K: 5120, P: 2, M: 7, dist: "ties"}, {K: 640, P: 1, M: 17, dist: "ties"}} {
		in, err := newProdInputs(c, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range []struct {
			name string
			emu  func(*prodInputs, int, quantizer) []byte
			want []byte
		}{{"group", emulateGroup, in.want.groupCodes}, {"token", emulateToken, in.want.tokRow}} {
			compare := func(got []byte) error {
				var f gates.Findings
				gates.CompareBytes(&f, path.name, got, path.want, 1, func(i int) string { return "" })
				return f.Err()
			}
			t.Run(path.name+"/"+rightQuantizer.name, func(t *testing.T) {
				if err := compare(path.emu(in, c.M, rightQuantizer)); err != nil {
					t.Errorf("K=%d: the contract's emulation differs from the mirror: %v", c.K, err)
				}
			})
			for _, bug := range plantedBugs {
				if path.name == "token" && bug.clamp != 127 {
					continue // per token, the bf16 rows cannot exceed 127 x As (their amax sets As)
				}
				t.Run(path.name+"/"+bug.name, func(t *testing.T) {
					if err := compare(path.emu(in, c.M, bug)); err == nil {
						t.Errorf("K=%d: a kernel with %s passes the mirror compare", c.K, bug.name)
					}
				})
			}
		}
	}
}

// The ties case has what it is for: exact ties in even groups (per group
// and per token) and codes that must clamp in odd groups (per group).
func TestTiesCaseHasTiesAndClamps(t *testing.T) {
	in, err := newProdInputs(prodCase{K: 640, P: 1, M: 5, dist: "ties"}, 9)
	if err != nil {
		t.Fatal(err)
	}
	v := in.rr.RotateF32(in.x, 5, 0)
	ties, clamps := 0, 0
	for m := 0; m < 5; m++ {
		for g := 0; g < 5; g++ {
			var a float32
			for _, x := range v[m*640+g*128 : m*640+(g+1)*128] {
				a = max(a, float32(math.Abs(float64(x))))
			}
			s := a / 127
			for _, x := range v[m*640+g*128 : m*640+(g+1)*128] {
				q := float64(x / s)
				if f := q - math.Floor(q); f == 0.5 {
					ties++
				}
				if math.Abs(q) >= 128 {
					clamps++
				}
			}
		}
	}
	if ties < 100 || clamps < 10 {
		t.Errorf("ties case: %d exact ties, %d codes past 127 (want >= 100, >= 10)", ties, clamps)
	}
}

// The int32 row sums are the sums of the codes, for every group of a
// normal and an outlier case.
func TestMirrorRowSumsAreCodeSums(t *testing.T) {
	for _, dist := range []string{"normal", "outlier", "subnormal"} {
		t.Run(dist, func(t *testing.T) {
			in, err := newProdInputs(prodCase{K: 384, P: 2, M: 9, dist: dist}, 5)
			if err != nil {
				t.Fatal(err)
			}
			w := in.want
			for i := 0; i < len(w.groupRSums)/4; i++ {
				var s, st int32
				for _, c := range w.groupCodes[i*128 : (i+1)*128] {
					s += int32(int8(c))
				}
				for _, c := range w.tokRow[i*128 : (i+1)*128] {
					st += int32(int8(c))
				}
				got := int32(uint32(w.groupRSums[4*i]) | uint32(w.groupRSums[4*i+1])<<8 | uint32(w.groupRSums[4*i+2])<<16 | uint32(w.groupRSums[4*i+3])<<24)
				gt := int32(uint32(w.tokRSums[4*i]) | uint32(w.tokRSums[4*i+1])<<8 | uint32(w.tokRSums[4*i+2])<<16 | uint32(w.tokRSums[4*i+3])<<24)
				if got != s || gt != st {
					t.Fatalf("group %d: row sums %d / %d, codes sum to %d / %d", i, got, gt, s, st)
				}
				for _, c := range w.groupCodes[i*128 : (i+1)*128] {
					if c == 0x80 {
						t.Fatalf("group %d: code -128", i)
					}
				}
			}
		})
	}
}

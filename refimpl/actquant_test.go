package refimpl

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestActGroupHandCase(t *testing.T) {
	K := 256
	x := make([]float32, K)
	x[0], x[1], x[2], x[3] = 896, 3, -3, 1 // group 0: amax 896, scale 2
	x[200] = 0.5                           // group 1: amax 0.5
	q := QuantizeActGroup(x, 1, K)
	if q.GroupScale[0] != 2 || q.GroupScale[1] != 0.5/448 {
		t.Fatalf("scales %v", q.GroupScale)
	}
	// 3/2 = 1.5 -> 0x3C; -1.5 -> 0xBC; 1/2 = 0.5 -> 0x30; 896/2 = 448 -> 0x7E.
	for k, want := range map[int]uint8{0: 0x7E, 1: 0x3C, 2: 0xBC, 3: 0x30, 4: 0, 200: 0x7E} {
		if q.Codes[k] != want {
			t.Errorf("code[%d] = %#02x, want %#02x", k, q.Codes[k], want)
		}
	}
	if q.RowSums[0] != 448+0.5 || q.RowSums[1] != 448 {
		t.Errorf("row sums %v, want [448.5 448]", q.RowSums)
	}
	if err := CheckActQuant(x, q); err != nil {
		t.Error(err)
	}
	// All-zero group: scale 0, codes 0, row sum 0.
	z := QuantizeActGroup(make([]float32, 128), 1, 128)
	if z.GroupScale[0] != 0 || z.RowSums[0] != 0 || z.Codes[5] != 0 {
		t.Errorf("zero group: %+v", z)
	}
}

// The row sum is the exact integer sum rounded once: a sequential float32
// sum would give 44800 here.
func TestActRowSumRoundsOnce(t *testing.T) {
	x := make([]float32, 128)
	for i := 0; i < 100; i++ {
		x[i] = 448 // scale 1, code 0x7E
	}
	x[100], x[101], x[102] = 0x1p-9, 0x1p-9, 0x1p-9 // code 0x01 each
	q := QuantizeActGroup(x, 1, 128)
	var seq float32
	for k := 0; k < 128; k++ {
		seq += DecodeE4M3(q.Codes[k])
	}
	want := float32(44800 + 0x1p-7) // exact 44800 + 3·2^-9 = 1.5 ulp: ties to even
	if q.RowSums[0] != want {
		t.Fatalf("row sum %.10g, want %.10g (sequential float32 sum: %.10g)", q.RowSums[0], want, seq)
	}
	if seq == want {
		t.Fatal("test premise: the sequential sum should differ")
	}
}

func TestActTokenHandCase(t *testing.T) {
	x := make([]float32, 256)
	x[0] = 448              // group 0 scale 1
	x[128], x[129] = 224, 3 // group 1 scale 0.5 alone, but the token scale is 1
	q := QuantizeActToken(x, 1, 256)
	if q.TokenScale[0] != 1 || q.GroupScale != nil {
		t.Fatalf("token scale %v", q.TokenScale)
	}
	if q.Codes[128] != EncodeE4M3(224) || q.Codes[129] != EncodeE4M3(3) {
		t.Fatalf("codes use the group scale, not the token scale")
	}
	if q.RowSums[1] != 227 {
		t.Fatalf("rowsum %g", q.RowSums[1])
	}
}

func TestActInt8HandCase(t *testing.T) {
	x := make([]float32, 128)
	x[0], x[1], x[2], x[3] = 254, 5, -3, 1 // scale 2: 2.5 -> 2, -1.5 -> -2, 0.5 -> 0
	q := QuantizeActGroupInt8(x, 1, 128)
	if q.GroupScale[0] != 2 {
		t.Fatalf("scale %g", q.GroupScale[0])
	}
	want := []int8{127, 2, -2, 0}
	for k, w := range want {
		if int8(q.Codes[k]) != w {
			t.Errorf("code[%d] = %d, want %d", k, int8(q.Codes[k]), w)
		}
	}
	if q.RowSums[0] != 127 {
		t.Errorf("rowsum %g", q.RowSums[0])
	}
	if v := q.Dequant()[2]; v != -4 {
		t.Errorf("dequant %g", v)
	}
}

// Activations like the gates draw: normal bulk, outliers, subnormal-heavy
// rows, a NaN and exact zeros.
func randActs(rng *rand.Rand, M, K int) []float32 {
	x := make([]float32, M*K)
	for m := 0; m < M; m++ {
		scale := 1.0
		switch m % 4 {
		case 1:
			scale = 1e-39 // float32 subnormals
		case 2:
			scale = 1e-3
		}
		for k := 0; k < K; k++ {
			v := rng.NormFloat64() * scale
			if rng.IntN(50) == 0 {
				v *= 100 // outliers
			}
			x[m*K+k] = float32(v)
		}
	}
	x[5] = 0
	if M > 3 {
		x[3*K+7] = float32(math.NaN())
	}
	return x
}

func TestActQuantSemantics(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	M, K := 8, 512
	x := randActs(rng, M, K)
	for name, f := range map[string]func([]float32, int, int) *QuantAct{
		"group": QuantizeActGroup, "token": QuantizeActToken, "group-int8": QuantizeActGroupInt8, "token-int8": QuantizeActTokenInt8,
	} {
		q := f(x, M, K)
		if err := q.Validate(); err != nil {
			t.Fatal(err)
		}
		if err := CheckActQuant(x, q); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		// Corruptions are caught.
		bad := *q
		bad.Codes = append([]uint8(nil), q.Codes...)
		bad.Codes[K+9] ^= 1
		if err := CheckActQuant(x, &bad); err == nil || !strings.Contains(err.Error(), "code[1,9]") {
			t.Errorf("%s: flipped code: %v", name, err)
		}
		bad = *q
		bad.RowSums = append([]float32(nil), q.RowSums...)
		bad.RowSums[3] = math.Nextafter32(bad.RowSums[3], 1e9)
		if err := CheckActQuant(x, &bad); err == nil || !strings.Contains(err.Error(), "rowsum") {
			t.Errorf("%s: rowsum off by an ulp: %v", name, err)
		}
		if q.GroupScale != nil {
			bad = *q
			bad.GroupScale = append([]float32(nil), q.GroupScale...)
			bad.GroupScale[0] = math.Nextafter32(bad.GroupScale[0], 0)
			if err := CheckActQuant(x, &bad); err == nil || !strings.Contains(err.Error(), "scale[0,0]") {
				t.Errorf("%s: scale off by an ulp: %v", name, err)
			}
		}
	}
}

// The float64 semantic quantizer and the mirror agree on almost every code
// and reconstruct x equally well.
func TestAct64AgreesWithMirror(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	M, K := 4, 1024
	x := make([]float32, M*K)
	x64 := make([]float64, M*K)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
		x64[i] = float64(x[i])
	}
	for _, pt := range []bool{false, true} {
		q := QuantizeActGroup(x, M, K)
		if pt {
			q = QuantizeActToken(x, M, K)
		}
		s := QuantizeAct64(x64, M, K, ActE4M3, pt)
		diff := 0
		for m := 0; m < M; m++ {
			for k := 0; k < K; k++ {
				if q.CodeValue(m, k) != s.Values[m*K+k] {
					diff++
				}
			}
		}
		if diff > M*K/1000 {
			t.Errorf("perToken=%v: %d of %d codes differ from the float64 semantics", pt, diff, M*K)
		}
		em, es := RelErr(q.Dequant(), x64), RelErr(s.A, x64)
		if math.Abs(em-es) > 0.01*es || es > 0.05 {
			t.Errorf("perToken=%v: reconstruction rel mirror %g, float64 %g", pt, em, es)
		}
	}
}

func TestNearestE4M3(t *testing.T) {
	for _, c := range []struct{ x, want float64 }{
		{1, 1}, {1.0625, 1}, {1.1875, 1.25}, {500, 448}, {-1e9, -448}, {0x1p-10, 0}, {-0x1p-10, 0},
		{0x1.8p-9, 0x1p-8}, {math.NaN(), 0}, {432, 448}, {424, 416},
	} {
		if got := NearestE4M3(c.x); got != c.want || math.Signbit(got) != math.Signbit(c.want) {
			t.Errorf("NearestE4M3(%g) = %g, want %g", c.x, got, c.want)
		}
	}
	for c := 0; c < 0x7F; c++ { // agrees with the codec on every value
		v := float64(DecodeE4M3(uint8(c)))
		if NearestE4M3(v) != v {
			t.Errorf("NearestE4M3(%g) moved", v)
		}
	}
}

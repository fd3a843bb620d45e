package refimpl

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

func TestTiledOffsetIsBijection(t *testing.T) {
	for _, K := range []int{128, 5120} {
		M := 32
		seen := make([]bool, M*K)
		for m := 0; m < M; m++ {
			for k := 0; k < K; k++ {
				o := TiledOffset(m, k, K)
				if o < 0 || o >= M*K || seen[o] {
					t.Fatalf("K=%d: offset %d of (%d,%d) out of range or repeated", K, o, m, k)
				}
				seen[o] = true
			}
		}
	}
	// Hand case: row 9, column 21 -> lane (9%8)*4 + (21%16)/4 = 5, register 1 + 2 = 3, byte 1.
	if got := TiledOffset(9, 21, 64); got != 5*16+3*4+1 {
		t.Fatalf("TiledOffset(9,21) = %d, want %d", got, 5*16+3*4+1)
	}
}

// TestRotateF32MatchesFloat64 checks the float32 mirror against the fp64
// rotation to float32 accuracy, and that records hold each pair once.
func TestRotateF32MatchesFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	K, M := 256, 3
	rot := RandomRotation(rng, K)
	rr, err := BuildRotRecords([]*Rotation{rot})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]uint16, M*K)
	for i := range x {
		x[i] = F64ToBF16(rng.NormFloat64())
	}
	v := rr.RotateF32(x, M, 0)
	for m := 0; m < M; m++ {
		ref := make([]float64, K)
		for c := range ref {
			ref[c] = BF16ToF64(x[m*K+c])
		}
		rot.Forward(ref)
		var num, den float64
		for c := range ref {
			d := float64(v[m*K+c]) - ref[c]
			num += d * d
			den += ref[c] * ref[c]
		}
		if rel := math.Sqrt(num / den); rel > 1e-6 {
			t.Errorf("row %d: float32 mirror vs fp64 rotation rel %.3g > 1e-6", m, rel)
		}
	}
	// Swapping cos and sin in the records must break the agreement.
	for i := 0; i < len(rr.CS); i += 2 {
		rr.CS[i], rr.CS[i+1] = rr.CS[i+1], rr.CS[i]
	}
	w := rr.RotateF32(x, 1, 0)
	ref := make([]float64, K)
	for c := range ref {
		ref[c] = BF16ToF64(x[c])
	}
	rot.Forward(ref)
	if math.Abs(float64(w[0])-ref[0]) < 1e-3 && math.Abs(float64(w[1])-ref[1]) < 1e-3 {
		t.Errorf("swapped cos/sin still agrees: the test cannot see a convention flip")
	}
}

func TestBuildRotRecordsRejects(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a := RandomRotation(rng, 256)
	b := RandomRotation(rng, 128)
	if _, err := BuildRotRecords([]*Rotation{a, b}); err == nil {
		t.Errorf("mixed K accepted")
	}
	if _, err := BuildRotRecords([]*Rotation{a, a, a, a}); err == nil {
		t.Errorf("4 partitions accepted")
	}
	a.Pairs[5] = a.Pairs[6]
	if _, err := BuildRotRecords([]*Rotation{a}); err == nil {
		t.Errorf("non-permutation layer accepted")
	}
}

// RotRecords.Bytes is what the producers' buffers hold: each u32 index word
// and each float32, little endian, in slice order.
func TestRotRecordsBytes(t *testing.T) {
	rr, err := BuildRotRecords([]*Rotation{RandomRotation(rand.New(rand.NewPCG(3, 4)), 256)})
	if err != nil {
		t.Fatal(err)
	}
	idx, cs, chs := rr.Bytes()
	if len(idx) != 4*len(rr.Idx) || len(cs) != 4*len(rr.CS) || len(chs) != 4*len(rr.ChS) {
		t.Fatalf("lengths %d %d %d", len(idx), len(cs), len(chs))
	}
	for i, w := range rr.Idx {
		if got := binary.LittleEndian.Uint32(idx[4*i:]); got != w {
			t.Fatalf("idx[%d] = %#x, want %#x", i, got, w)
		}
	}
	for i, f := range rr.CS {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(cs[4*i:])); got != f {
			t.Fatalf("cs[%d] = %g, want %g", i, got, f)
		}
	}
	for i, f := range rr.ChS {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(chs[4*i:])); got != f {
			t.Fatalf("chs[%d] = %g, want %g", i, got, f)
		}
	}
}

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

// rotateF32Lanes is the records' rotation written as the kernels read the
// records, row by row and lane by lane (the definition RotateF32's
// group-major, unrolled loop must equal bit for bit).
func rotateF32Lanes(rr *RotRecords, x []uint16, M, p int) []float32 {
	K, G := rr.K, rr.K/GroupSize
	v := make([]float32, M*K)
	for m := 0; m < M; m++ {
		for c := 0; c < K; c++ {
			v[m*K+c] = float32(BF16ToF32(x[m*K+c]) * rr.ChS[p*K+c])
		}
		for g := 0; g < G; g++ {
			sv := v[m*K+g*GroupSize : m*K+(g+1)*GroupSize]
			for l := 0; l < rr.Krot; l++ {
				for lane := 0; lane < 32; lane++ {
					o := ((p*rr.Krot+l)*G+g)*32 + lane
					w := rr.Idx[o]
					for h := 0; h < LanePairs; h++ {
						i, j := (w>>(16*h))&0xFF, (w>>(16*h+8))&0xFF
						c, s := rr.CS[4*o+2*h], rr.CS[4*o+2*h+1]
						a, b := sv[i], sv[j]
						sv[i] = FMA32(c, a, float32(s*b))
						sv[j] = FMA32(c, b, -float32(s*a))
					}
				}
			}
		}
	}
	return v
}

// RotateF32 equals the lane-by-lane reading of the records bit for bit,
// on normal and subnormal rows, for every partition.
func TestRotateF32EqualsLaneOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	K, M := 384, 5
	rots := []*Rotation{RandomRotation(rng, K), RandomRotation(rng, K), RandomRotation(rng, K)}
	rr, err := BuildRotRecords(rots)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]uint16, M*K)
	for i := range x {
		v := rng.NormFloat64()
		if (i/K)%2 == 1 {
			v *= 1e-39 // float32 subnormal rows: FMA32's slow path
		}
		x[i] = F64ToBF16(v)
	}
	for p := range rots {
		got, want := rr.RotateF32(x, M, p), rotateF32Lanes(rr, x, M, p)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("p=%d m=%d k=%d: RotateF32 %#08x, lane order %#08x", p, i/K, i%K, math.Float32bits(got[i]), math.Float32bits(want[i]))
			}
		}
	}
	// A record naming a channel past the group panics instead of reading
	// a neighbour.
	rr.Idx[7] |= 0x80
	defer func() {
		if recover() == nil {
			t.Error("a record with channel index >= 128 did not panic")
		}
	}()
	rr.RotateF32(x, M, 0)
}

// BenchmarkRotateF32 is the float32 mirror rotation of a prefill block
// (ns per row: K=5120, 64 rows per op).
func BenchmarkRotateF32(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	K, M := 5120, 64
	rr, err := BuildRotRecords([]*Rotation{RandomRotation(rng, K)})
	if err != nil {
		b.Fatal(err)
	}
	x := make([]uint16, M*K)
	for i := range x {
		x[i] = F64ToBF16(rng.NormFloat64())
	}
	v := make([]float32, M*K)
	b.SetBytes(int64(2 * M * K))
	for b.Loop() {
		rr.RotateF32Into(v, x, M, 0)
	}
}

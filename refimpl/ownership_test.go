package refimpl

import (
	"math/rand/v2"
	"testing"
)

// TestOwnershipMovesReproduceRotation checks that the conflict-free layout's
// moves, simulated with the kernels' arithmetic, give RotateF32's bits, and
// that every write instruction hits 32 distinct banks.
func TestOwnershipMovesReproduceRotation(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	K := 512
	rots := []*Rotation{randomRotation(rng, K), randomRotation(rng, K)}
	rr, err := BuildRotRecords(rots)
	if err != nil {
		t.Fatal(err)
	}
	moves, err := rr.OwnershipMoves()
	if err != nil {
		t.Fatal(err)
	}
	G, T := K/GroupSize, rr.Krot+1
	for i := 0; i < len(moves); i += 2 * 32 {
		for q := 0; q < 4; q++ {
			var banks [32]bool
			for lane := 0; lane < 32; lane++ {
				slot := (moves[i+2*lane] >> (8 * q)) & 0xFF
				if slot >= GroupSize || banks[slot%32] {
					t.Fatalf("move block %d write %d: slot %d repeats a bank", i/64, q, slot)
				}
				banks[slot%32] = true
			}
		}
	}
	_ = T
	x := make([]uint16, K)
	for i := range x {
		x[i] = F64ToBF16(rng.NormFloat64())
	}
	for p := range rots {
		want := rr.RotateF32(x, 1, p)
		for g := 0; g < G; g++ {
			v := make([]float32, GroupSize)
			for c := range v {
				v[c] = float32(BF16ToF32(x[g*GroupSize+c]) * rr.ChS[p*K+g*GroupSize+c])
			}
			got := rr.SimulateOwnership(moves, v, p, g)
			for c := range got {
				if got[c] != want[g*GroupSize+c] {
					t.Fatalf("p=%d g=%d channel %d: ownership %g, RotateF32 %g", p, g, c, got[c], want[g*GroupSize+c])
				}
			}
		}
	}
}
